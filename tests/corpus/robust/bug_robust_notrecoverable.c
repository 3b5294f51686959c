// BUG: a worker dies holding a robust mutex; the main thread ignores EOWNERDEAD and
// unlocks without pthread_mutex_consistent, so the mutex is not recoverable and its next
// lock fails with ENOTRECOVERABLE: the assertion fails in every run.
#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>

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
    pthread_join(t, NULL);
    int r = pthread_mutex_lock(&m);  // EOWNERDEAD, ignored
    pthread_mutex_unlock(&m);
    r = pthread_mutex_lock(&m);
    printf("lock: %d\n", r);
    assert(r == 0);
    pthread_mutex_unlock(&m);
    return 0;
}
