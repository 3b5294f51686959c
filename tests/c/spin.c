/* A thread spins forever on a flag nobody sets, with no scheduling point: hang. */
#include "common.h"
#include <pthread.h>

static volatile int flag;

static void *worker(void *arg) {
    while (!flag) {
    }
    return arg;
}

int main(void) {
    record_pid();
    pthread_t t;
    pthread_create(&t, NULL, worker, NULL);
    pthread_join(t, NULL);
    return 0;
}
