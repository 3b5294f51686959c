#define _GNU_SOURCE
/* Exit paths: pthread_exit from a thread and from main, fds the program must not close,
 * exit codes, atexit handlers after the exit. Usage: exit_paths [code]. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static int done, inits;

static void init(void) { inits++; }

/* Runs under control before the process exit is posted (the last exit handler, libpos's,
 * posts it): the once routine already ran. */
static void at_exit(void) {
    pthread_mutex_lock(&m);
    pthread_mutex_unlock(&m);
    pthread_once(&once, init);
    if (inits != 1) _exit(42);
}

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
    atexit(at_exit);
    pthread_once(&once, init);
    pthread_create(&t, NULL, quitter, NULL);
    pthread_join(t, &r);
    if ((long)r != 7 || done != 1) return 3;
    if (argc > 1) exit(atoi(argv[1]));
    pthread_create(&t, NULL, quitter, NULL);
    pthread_exit(NULL); /* the process ends when the last thread does: status 0 */
}
