/* timed_poll: a consumer polls with pthread_cond_timedwait (10 ms) until the producer, which
 * first sleeps 50 ms, has set `ready`. The consumer's fifth timeout falls at the producer's
 * wake-up: either may take the mutex first, so the consumer sees 4 or 5 timeouts (2 traces).
 * With `strict` as argv[1] main asserts 5 timeouts: a bug in the trace where the producer
 * is first. Otherwise it only asserts `ready`. odpor, dpor and rt explored 1 execution (the
 * other one) before 2026-11-27: the reversal of the timeout was judged infeasible, time not
 * being let pass where the run's clock passed. Explore with `--points sync`. */
#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <string.h>
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

int main(int argc, char **argv) {
    int strict = argc > 1 && strcmp(argv[1], "strict") == 0;
    pthread_t p;
    pthread_create(&p, NULL, producer, NULL);
    pthread_mutex_lock(&m);
    while (!ready) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 10 * 1000 * 1000;
        if (ts.tv_nsec >= 1000000000) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000;
        }
        int r = pthread_cond_timedwait(&c, &m, &ts);
        assert(r == 0 || r == ETIMEDOUT);
        if (r == ETIMEDOUT) timeouts++;
    }
    pthread_mutex_unlock(&m);
    pthread_join(p, NULL);
    assert(ready == 1);
    assert(!strict || timeouts == 5);
    return 0;
}
