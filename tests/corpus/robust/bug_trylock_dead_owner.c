// BUG: the main thread's trylock expects the mutex free or held (0 or EBUSY), but when the
// worker has exited holding it the trylock returns EOWNERDEAD: the assertion fails in the
// schedules where the worker's exit comes before the trylock, and only there.
#include <assert.h>
#include <errno.h>
#include <pthread.h>

static pthread_mutex_t m;

static void *worker(void *arg) {
    (void)arg;
    pthread_mutex_lock(&m);
    return NULL;  // exits holding m
}

int main(void) {
    pthread_mutexattr_t a;
    pthread_mutexattr_init(&a);
    pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
    pthread_mutex_init(&m, &a);
    pthread_t t;
    pthread_create(&t, NULL, worker, NULL);
    int r = pthread_mutex_trylock(&m);
    assert(r == 0 || r == EBUSY);
    if (r == 0)
        pthread_mutex_unlock(&m);
    pthread_join(t, NULL);
    return 0;
}
