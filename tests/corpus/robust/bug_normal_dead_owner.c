// BUG: a worker exits holding a normal (not robust) mutex; the main thread's lock waits
// for ever (a deadlock in every run).
#include <pthread.h>
#include <stdio.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;

static void *worker(void *arg) {
    (void)arg;
    pthread_mutex_lock(&m);
    return NULL;  // exits holding m
}

int main(void) {
    pthread_t t;
    pthread_create(&t, NULL, worker, NULL);
    pthread_join(t, NULL);
    pthread_mutex_lock(&m);
    puts("never");
    return 0;
}
