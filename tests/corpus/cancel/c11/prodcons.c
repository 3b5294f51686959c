// Correct (C11 <threads.h>): a bounded buffer with cnd_wait/cnd_signal, a closing
// cnd_broadcast, a trylock that may find the mutex busy, a timed lock that retries when it
// times out, and thrd_sleep. Never a bug.
#include <assert.h>
#include <threads.h>
#include <time.h>

enum { ITEMS = 4, CONSUMERS = 2 };
static mtx_t m;
static cnd_t not_empty, not_full;
static int buf, full, done, consumed;

static int producer(void *arg) {
    (void)arg;
    for (int i = 1; i <= ITEMS; i++) {
        mtx_lock(&m);
        while (full)
            cnd_wait(&not_full, &m);
        buf = i;
        full = 1;
        cnd_signal(&not_empty);
        mtx_unlock(&m);
    }
    struct timespec nap = {0, 1000};
    assert(thrd_sleep(&nap, NULL) == 0);
    mtx_lock(&m);
    while (full)
        cnd_wait(&not_full, &m);
    done = 1;
    cnd_broadcast(&not_empty);
    mtx_unlock(&m);
    return 0;
}

static int consumer(void *arg) {
    (void)arg;
    for (;;) {
        int r = mtx_trylock(&m);
        assert(r == thrd_success || r == thrd_busy);
        if (r == thrd_busy) {
            struct timespec ts;
            timespec_get(&ts, TIME_UTC);
            ts.tv_sec += 5;
            while ((r = mtx_timedlock(&m, &ts)) == thrd_timedout)
                ;
            assert(r == thrd_success);
        }
        while (!full && !done)
            cnd_wait(&not_empty, &m);
        if (full) {
            consumed += buf;
            full = 0;
            cnd_signal(&not_full);
            mtx_unlock(&m);
            continue;
        }
        mtx_unlock(&m);
        return 0;
    }
}

int main(void) {
    thrd_t p, c[CONSUMERS];
    mtx_init(&m, mtx_timed);
    cnd_init(&not_empty);
    cnd_init(&not_full);
    thrd_create(&p, producer, NULL);
    for (int i = 0; i < CONSUMERS; i++)
        thrd_create(&c[i], consumer, NULL);
    thrd_join(p, NULL);
    for (int i = 0; i < CONSUMERS; i++)
        thrd_join(c[i], NULL);
    assert(consumed == ITEMS * (ITEMS + 1) / 2);
    cnd_destroy(&not_empty);
    cnd_destroy(&not_full);
    mtx_destroy(&m);
    return 0;
}
