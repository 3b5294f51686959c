/* Correct: C11 <threads.h> timing, whose deadlines come from timespec_get(TIME_UTC).
 * - thrd_sleep of 10 ms lasts at least 10 ms by timespec_get;
 * - mtx_timedlock with a 2 ms deadline times out while the holder sleeps 20 ms with it;
 * - cnd_timedwait with a 2 ms deadline times out before a 20 ms sleeper signals;
 * - a raw syscall(SYS_clock_gettime) reads the same clock as clock_gettime.
 * (timespec_get read real time under poscheck, a second or more from the virtual clock that
 * the waits follow: the timed lock never timed out and the sleep measured ~0 ms.) */
#define _GNU_SOURCE
#include <assert.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <threads.h>
#include <time.h>
#include <unistd.h>

static mtx_t m, cm;
static cnd_t c;
static int holding, signalled;

static int64_t ns(const struct timespec *t) { return (int64_t)t->tv_sec * 1000000000 + t->tv_nsec; }

static struct timespec after_ms(long ms) {
    struct timespec t;
    timespec_get(&t, TIME_UTC);
    t.tv_nsec += ms * 1000000L;
    t.tv_sec += t.tv_nsec / 1000000000L;
    t.tv_nsec %= 1000000000L;
    return t;
}

static void sleep_ms(long ms) {
    struct timespec d = {0, ms * 1000000L};
    thrd_sleep(&d, NULL);
}

static int holder(void *arg) {
    (void)arg;
    mtx_lock(&m);
    holding = 1;
    sleep_ms(20);
    mtx_unlock(&m);
    return 0;
}

static int signaller(void *arg) {
    (void)arg;
    sleep_ms(20);
    mtx_lock(&cm);
    signalled = 1;
    cnd_signal(&c);
    mtx_unlock(&cm);
    return 0;
}

int main(void) {
    struct timespec a, b;
    timespec_get(&a, TIME_UTC);
    sleep_ms(10);
    timespec_get(&b, TIME_UTC);
    assert(ns(&b) - ns(&a) >= 10000000);

    struct timespec cg, raw;
    clock_gettime(CLOCK_REALTIME, &cg);
    syscall(SYS_clock_gettime, CLOCK_REALTIME, &raw);
    assert(ns(&raw) - ns(&cg) >= 0 && ns(&raw) - ns(&cg) < 1000000000);

    mtx_init(&m, mtx_timed);
    thrd_t h;
    thrd_create(&h, holder, NULL);
    while (!__atomic_load_n(&holding, __ATOMIC_SEQ_CST))
        thrd_yield();
    struct timespec d = after_ms(2);
    assert(mtx_timedlock(&m, &d) == thrd_timedout);
    thrd_join(h, NULL);

    mtx_init(&cm, mtx_plain);
    cnd_init(&c);
    thrd_t s;
    thrd_create(&s, signaller, NULL);
    mtx_lock(&cm);
    d = after_ms(2);
    int r = thrd_success;
    while (!signalled && r != thrd_timedout)
        r = cnd_timedwait(&c, &cm, &d);
    assert(r == thrd_timedout && !signalled);
    mtx_unlock(&cm);
    thrd_join(s, NULL);
    return 0;
}
