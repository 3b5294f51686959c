#define _GNU_SOURCE
/* Exit paths: pthread_exit from a thread and from main, fds the program must not close,
 * exit codes. Usage: exit_paths [code]. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static int done;

static void *quitter(void *arg) {
    (void)arg;
    pthread_mutex_lock(&m);
    done++;
    pthread_mutex_unlock(&m);
    pthread_exit((void *)7);
    return NULL;
}

int main(int argc, char **argv) {
    /* A program that closes every fd it does not know must not cut libpos off. */
    for (int fd = 3; fd < 4096; fd++) close(fd);
    closefrom(3);
    pthread_t t;
    void *r;
    pthread_create(&t, NULL, quitter, NULL);
    pthread_join(t, &r);
    if ((long)r != 7 || done != 1) return 3;
    if (argc > 1) exit(atoi(argv[1]));
    pthread_create(&t, NULL, quitter, NULL);
    pthread_exit(NULL); /* the process ends when the last thread does: status 0 */
}
