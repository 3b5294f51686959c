// Correct: a worker blocked in pthread_cond_wait is cancelled; its cleanup handler unlocks
// the mutex (which the cancelled wait re-acquired), so main can lock it afterwards, and
// pthread_join returns PTHREAD_CANCELED. Never a bug.
#include <assert.h>
#include <pthread.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t c = PTHREAD_COND_INITIALIZER;
static int ready, cleaned;

static void unlock_it(void *arg) {
    cleaned = 1;
    pthread_mutex_unlock(arg);
}

static void *worker(void *arg) {
    (void)arg;
    pthread_mutex_lock(&m);
    pthread_cleanup_push(unlock_it, &m);
    while (!ready)
        pthread_cond_wait(&c, &m);
    pthread_cleanup_pop(1);
    return NULL;
}

int main(void) {
    pthread_t t;
    void *ret;
    pthread_create(&t, NULL, worker, NULL);
    pthread_cancel(t);
    pthread_join(t, &ret);
    assert(ret == PTHREAD_CANCELED);
    assert(cleaned);
    pthread_mutex_lock(&m);
    pthread_mutex_unlock(&m);
    return 0;
}
