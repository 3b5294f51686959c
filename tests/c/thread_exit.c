/* A non-main thread calls exit(3) while main waits in join: exit-code 3. */
#include "common.h"
#include <pthread.h>

static void *worker(void *arg) {
    exit(3);
    return arg;
}

int main(void) {
    record_pid();
    pthread_t t;
    pthread_create(&t, NULL, worker, NULL);
    pthread_join(t, NULL);
    return 0;
}
