/* trylock_sections: a worker takes the mutex twice; another tries it once, with
 * pthread_mutex_trylock (argv[1] "try") or with pthread_mutex_timedlock and a deadline that is
 * already past ("timed"). Before, between or after the worker's two sections the attempt gets
 * the mutex; inside either section it fails (EBUSY, ETIMEDOUT): 5 traces, 2 of them
 * failures. With "strict" as argv[2] a failure is a bug (an assertion). rt explored 3 traces
 * and neither failure before 2026-11-27: it took a failed attempt for an acquisition of the
 * last release, and had no variant in which an attempt that got the mutex fails. Explore
 * with `--points sync`. */
#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <time.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static int timed, strict, shared;

static void *holder(void *arg) {
    for (int i = 0; i < 2; i++) {
        pthread_mutex_lock(&m);
        shared++;
        pthread_mutex_unlock(&m);
    }
    return arg;
}

static void *attempt(void *arg) {
    int r;
    if (timed) {
        struct timespec past; /* a second ago: due at once */
        clock_gettime(CLOCK_REALTIME, &past);
        past.tv_sec -= 1;
        r = pthread_mutex_timedlock(&m, &past);
        assert(r == 0 || r == ETIMEDOUT);
    } else {
        r = pthread_mutex_trylock(&m);
        assert(r == 0 || r == EBUSY);
    }
    assert(!strict || r == 0);
    if (r == 0) {
        shared++;
        pthread_mutex_unlock(&m);
    }
    return arg;
}

int main(int argc, char **argv) {
    timed = argc > 1 && strcmp(argv[1], "timed") == 0;
    strict = argc > 2 && strcmp(argv[2], "strict") == 0;
    pthread_t a, b;
    pthread_create(&a, NULL, holder, NULL);
    pthread_create(&b, NULL, attempt, NULL);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    assert(shared >= 2 && shared <= 3);
    return 0;
}
