/* A thread calls abort(): crash, SIGABRT. */
#include "common.h"
#include <pthread.h>

static void *worker(void *arg) {
    abort();
    return arg;
}

int main(void) {
    record_pid();
    pthread_t t;
    pthread_create(&t, NULL, worker, NULL);
    pthread_join(t, NULL);
    return 0;
}
