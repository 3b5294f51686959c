/*
 * race_twice_plain.c -- one write racing against two writes, without the
 * start barrier, for the theory-vs-practice test (runner/tests/points.rs):
 * its whole event structure under `poscheck cc` + `--points mem` is
 * expressible by the simulator (benchmarks/models/race-twice-real.model):
 *   main: create A; create B; join A; join B; exit(0)
 *   A:    [W x] (an atomic exchange: one RMW, a write); exit
 *   B:    [W x, W x] (atomic stores of 2 then 3); exit
 * Bug: A's write lands strictly between B's two writes (the exchange returns 2).
 */
#undef NDEBUG
#include <assert.h>
#include <pthread.h>
#include <stddef.h>

static int x;

static void *thread_a(void *arg)
{
    (void)arg;
    int old = __atomic_exchange_n(&x, 1, __ATOMIC_SEQ_CST); /* [W x] */
    assert(old != 2); /* BUG manifests iff A is between B's writes */
    return NULL;
}

static void *thread_b(void *arg)
{
    (void)arg;
    __atomic_store_n(&x, 2, __ATOMIC_SEQ_CST); /* [W x] */
    __atomic_store_n(&x, 3, __ATOMIC_SEQ_CST); /* [W x] */
    return NULL;
}

int main(void)
{
    pthread_t a, b;
    pthread_create(&a, NULL, thread_a, NULL);
    pthread_create(&b, NULL, thread_b, NULL);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    return 0;
}
