/* The program closes its stdout, then works normally: ok. */
#include "common.h"
#include <pthread.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static int counter;

static void *worker(void *arg) {
    pthread_mutex_lock(&m);
    counter++;
    pthread_mutex_unlock(&m);
    return arg;
}

int main(void) {
    record_pid();
    printf("before close\n");
    fflush(stdout);
    close(1);
    pthread_t t;
    pthread_create(&t, NULL, worker, NULL);
    worker(NULL);
    pthread_join(t, NULL);
    printf("after close\n");
    return counter == 2 ? 0 : 1;
}
