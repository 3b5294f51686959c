/*
 * cas_lost_update.c -- a counter incremented with an atomic load and a
 * compare-and-swap whose failure is ignored (lost update).
 *
 * Pattern: two threads each do  old = load(n); CAS(n, old, old + 1)  and do
 *   not retry when the CAS fails. If the other thread's CAS lands between a
 *   thread's load and its CAS, that CAS fails and the increment is lost.
 *   Every access to n is an atomic operation: there is no data race, so a
 *   race detector never points at it; only scheduling points at the atomics
 *   reach the window.
 * Expected: assertion failure (n == 1 instead of 2) in some interleavings.
 */
#undef NDEBUG
#include <assert.h>
#include <pthread.h>
#include <stddef.h>

static long n;

static void *worker(void *arg)
{
    (void)arg;
    long old = __atomic_load_n(&n, __ATOMIC_ACQUIRE);
    /* Bug: the result is ignored; a failed CAS should reload and retry. */
    __atomic_compare_exchange_n(&n, &old, old + 1, 0, __ATOMIC_ACQ_REL,
                                __ATOMIC_ACQUIRE);
    return NULL;
}

int main(void)
{
    pthread_t a, b;
    pthread_create(&a, NULL, worker, NULL);
    pthread_create(&b, NULL, worker, NULL);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    assert(__atomic_load_n(&n, __ATOMIC_SEQ_CST) == 2);
    return 0;
}
