/*
 * descriptors_at_start.c -- a program starts with the descriptors a fresh exec gives it.
 *
 * Usage: `descriptors_at_start list` prints the descriptors between 3 and 999 open at main
 *   (those it inherited); `descriptors_at_start FD...` checks at main that exactly those are
 *   open, then two threads take a lock.
 * Expected: under poscheck, with or without the fork server and whatever run it is, the
 *   program sees what it sees when run directly (libpos keeps its own descriptors at 1000
 *   and above): a descriptor of the harness left in the program shifts the numbers its
 *   open() calls return. Exit code 3, and the difference on stderr, otherwise.
 *   Pthread-call points suffice.
 */
#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static int count;

static void *worker(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&m);
    count++;
    pthread_mutex_unlock(&m);
    return NULL;
}

int main(int argc, char **argv)
{
    static char open_now[1000];
    DIR *d = opendir("/proc/self/fd");
    if (!d)
        return 4;
    for (struct dirent *e; (e = readdir(d));) {
        int fd = atoi(e->d_name);
        if (e->d_name[0] != '.' && fd != dirfd(d) && fd >= 3 && fd < 1000)
            open_now[fd] = 1;
    }
    closedir(d);
    if (argc == 2 && strcmp(argv[1], "list") == 0) {
        for (int fd = 3; fd < 1000; fd++)
            if (open_now[fd])
                printf("%d\n", fd);
        return 0;
    }
    static char expected[1000];
    for (int i = 1; i < argc; i++) {
        int fd = atoi(argv[i]);
        if (fd >= 3 && fd < 1000)
            expected[fd] = 1;
    }
    int differ = 0;
    for (int fd = 3; fd < 1000; fd++)
        if (open_now[fd] != expected[fd]) {
            fprintf(stderr, "descriptor %d is %s\n", fd,
                    open_now[fd] ? "open but should not be" : "missing");
            differ = 1;
        }
    pthread_t t[2];
    for (int i = 0; i < 2; i++)
        pthread_create(&t[i], NULL, worker, NULL);
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    return differ ? 3 : (count == 2 ? 0 : 1);
}
