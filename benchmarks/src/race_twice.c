/*
 * race_twice.c -- one write racing against two writes (POS paper style).
 *
 * Exact shared-memory event structure (after the start barrier; x is the
 * only shared variable, everything else is on the stack):
 *   thread A: [W x]         an atomic exchange x := 1 that returns the old
 *                           value (one RMW event, counted as a write)
 *   thread B: [W x, W x]    atomic stores x := 2, then x := 3
 * A asserts directly on the value its exchange returned.
 * Bug: A's write lands strictly between B's two writes, i.e. the exchange
 *   returns 2. (A first -> old 0; A last -> old 3.) Under a uniform random
 *   walk over these 3 events the probability is 1/4. Plain stores cannot
 *   distinguish "A between" from "A first" (both end with x == 3), hence the
 *   exchange. Needs memory-access scheduling points (B's two writes have no
 *   pthread call between them).
 * Both threads wait on a 2-party pthread_barrier first so that both event
 * sequences start from the same state, as in the abstract model.
 * Expected: assertion failure in thread A in the bad interleaving.
 */
#undef NDEBUG
#include <assert.h>
#include <pthread.h>
#include <sched.h>
#include <stddef.h>

#ifdef POS_STRESS /* native evidence builds only: widen the race window */
#define STRESS() sched_yield()
#else
#define STRESS() ((void)0)
#endif

static pthread_barrier_t start;
static int x;

static void *thread_a(void *arg)
{
    (void)arg;
    pthread_barrier_wait(&start);
    int old = __atomic_exchange_n(&x, 1, __ATOMIC_SEQ_CST); /* [W x] */
    assert(old != 2); /* BUG manifests iff A is between B's writes */
    return NULL;
}

static void *thread_b(void *arg)
{
    (void)arg;
    pthread_barrier_wait(&start);
    __atomic_store_n(&x, 2, __ATOMIC_SEQ_CST); /* [W x] */
    STRESS();
    __atomic_store_n(&x, 3, __ATOMIC_SEQ_CST); /* [W x] */
    return NULL;
}

int main(void)
{
    pthread_t a, b;
    pthread_barrier_init(&start, NULL, 2);
    pthread_create(&a, NULL, thread_a, NULL);
    pthread_create(&b, NULL, thread_b, NULL);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    pthread_barrier_destroy(&start);
    return 0;
}
