/* Correct: a consumer polls with a 1 ms pthread_cond_timedwait while the producer (which
 * never sleeps) does some locked work before setting `ready`. With `--timeouts any` every
 * poll may time out at once; a scheduler that keeps running the poller (PCT without the
 * yield rule for timeouts) starves the producer into the step limit. */
#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <time.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t c = PTHREAD_COND_INITIALIZER;
static int ready, work;

static void *producer(void *arg) {
    for (int i = 0; i < 20; i++) {
        pthread_mutex_lock(&m);
        work++;
        pthread_mutex_unlock(&m);
    }
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
        ts.tv_nsec += 1000 * 1000;
        if (ts.tv_nsec >= 1000000000) { ts.tv_sec++; ts.tv_nsec -= 1000000000; }
        int r = pthread_cond_timedwait(&c, &m, &ts);
        assert(r == 0 || r == ETIMEDOUT);
    }
    assert(work == 20);
    pthread_mutex_unlock(&m);
    pthread_join(p, NULL);
    return 0;
}
