// Correct: a worker blocked in pthread_cond_timedwait (a 5 s deadline, re-armed when it
// times out) is cancelled; the cancelled wait re-acquires the mutex and the cleanup handler
// unlocks it, so main can lock it afterwards. Never a bug.
#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <time.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t c = PTHREAD_COND_INITIALIZER;
static int ready, cleaned, timeouts;

static void unlock_it(void *arg) {
    cleaned = 1;
    pthread_mutex_unlock(arg);
}

static void *worker(void *arg) {
    (void)arg;
    pthread_mutex_lock(&m);
    pthread_cleanup_push(unlock_it, &m);
    while (!ready) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_sec += 5;
        int r = pthread_cond_timedwait(&c, &m, &ts);
        assert(r == 0 || r == ETIMEDOUT);
        if (r == ETIMEDOUT)
            timeouts++;
    }
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
