/* A thread blocks in read() on a pipe nobody writes to (an uncontrolled blocking call): hang. */
#include "common.h"
#include <pthread.h>

static int fds[2];

static void *worker(void *arg) {
    char c;
    ssize_t n = read(fds[0], &c, 1);
    (void)n;
    return arg;
}

int main(void) {
    record_pid();
    if (pipe(fds) != 0) return 5;
    pthread_t t;
    pthread_create(&t, NULL, worker, NULL);
    pthread_join(t, NULL);
    return 0;
}
