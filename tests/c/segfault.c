/* A thread dereferences NULL in crash_here(): crash, SIGSEGV, thread 0.1. */
#include "common.h"
#include <pthread.h>

__attribute__((noinline)) void crash_here(volatile int *p) { *p = 42; }

static void *worker(void *arg) {
    crash_here((volatile int *)arg);
    return NULL;
}

int main(void) {
    record_pid();
    pthread_t t;
    pthread_create(&t, NULL, worker, NULL);
    pthread_join(t, NULL);
    return 0;
}
