/* Correct: threads busy-wait on the clock (2 ms), the monotonic clock never goes backwards,
 * and time() agrees with clock_gettime(CLOCK_REALTIME). Must terminate. */
#include <assert.h>
#include <pthread.h>
#include <sys/time.h>
#include <time.h>

static long long now_ns(clockid_t c) {
    struct timespec ts;
    clock_gettime(c, &ts);
    return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static int n;

static void *spin(void *arg) {
    long long t0 = now_ns(CLOCK_MONOTONIC), last = t0;
    while (now_ns(CLOCK_MONOTONIC) - t0 < 2000000) {
        long long t = now_ns(CLOCK_MONOTONIC);
        assert(t >= last);
        last = t;
    }
    pthread_mutex_lock(&m);
    n++;
    pthread_mutex_unlock(&m);
    return arg;
}

int main(void) {
    pthread_t t[2];
    time_t a = time(NULL);
    struct timeval tv;
    gettimeofday(&tv, NULL);
    assert(tv.tv_sec >= a && tv.tv_sec - a < 5);
    for (int i = 0; i < 2; i++) pthread_create(&t[i], NULL, spin, NULL);
    spin(NULL);
    for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
    assert(n == 3);
    return 0;
}
