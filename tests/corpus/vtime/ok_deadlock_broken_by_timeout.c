/* Correct: two threads take two mutexes in opposite orders, but the second acquisition is a
 * timed lock (100 ms); on timeout a thread backs off (releases, sleeps, retries). The lock-
 * order deadlock is broken by the timeouts, and both threads finish. */
#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t a = PTHREAD_MUTEX_INITIALIZER, b = PTHREAD_MUTEX_INITIALIZER;
static int done;

static void take_both(pthread_mutex_t *first, pthread_mutex_t *second, int backoff_us) {
    for (;;) {
        pthread_mutex_lock(first);
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 100 * 1000 * 1000;
        if (ts.tv_nsec >= 1000000000) { ts.tv_sec++; ts.tv_nsec -= 1000000000; }
        int r = pthread_mutex_timedlock(second, &ts);
        if (r == 0) break;
        assert(r == ETIMEDOUT);
        pthread_mutex_unlock(first);
        usleep(backoff_us);
    }
    done++;
    pthread_mutex_unlock(second);
    pthread_mutex_unlock(first);
}

static void *other(void *arg) {
    take_both(&b, &a, 3000);
    return arg;
}

int main(void) {
    pthread_t t;
    pthread_create(&t, NULL, other, NULL);
    take_both(&a, &b, 7000);
    pthread_join(t, NULL);
    assert(done == 2);
    return 0;
}
