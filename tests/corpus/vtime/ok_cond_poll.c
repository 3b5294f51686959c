/* Correct: a consumer polls with pthread_cond_timedwait (10 ms) until the producer has set
 * `ready`; the producer takes a while (sleeps 50 ms) before signalling. Timeouts happen and
 * are handled: the loop re-checks the predicate. */
#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t c = PTHREAD_COND_INITIALIZER;
static int ready, timeouts;

static void *producer(void *arg) {
    usleep(50000);
    pthread_mutex_lock(&m);
    ready = 1;
    pthread_cond_signal(&c);
    pthread_mutex_unlock(&m);
    return arg;
}

int main(void) {
    pthread_t p;
    pthread_create(&p, NULL, producer, NULL);
    pthread_mutex_lock(&m);
    while (!ready) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 10 * 1000 * 1000;
        if (ts.tv_nsec >= 1000000000) { ts.tv_sec++; ts.tv_nsec -= 1000000000; }
        int r = pthread_cond_timedwait(&c, &m, &ts);
        assert(r == 0 || r == ETIMEDOUT);
        if (r == ETIMEDOUT) timeouts++;
    }
    pthread_mutex_unlock(&m);
    pthread_join(p, NULL);
    assert(ready == 1);
    return 0;
}
