/*
 * delay_7.c -- the POS paper's motivating example (one read vs. a chain of
 * seven writes).
 *
 * Exact shared-memory event structure (after the start barrier; all
 * variables are distinct global volatile ints, all thread-local values are
 * on the stack):
 *   thread A: [R x]
 *   thread B: [W y1, W y2, W y3, W y4, W y5, W y6, W x]
 * A asserts on the value it read, directly (no further shared events).
 * Bug: B's write of x happens before A's read of x (A reads 1).
 *   Under a uniform random walk over these 8 events this happens with
 *   probability 1/2^7 = 1/128; POS should hit it far more often.
 * Both threads first wait on a 2-party pthread_barrier so that, like in the
 * abstract model, both event sequences start from the same state regardless
 * of thread creation order. (At pthread-call granularity the bug is still
 * reachable by running all of B before A, but the intended use is with
 * memory-access scheduling points.)
 * Expected: assertion failure in thread A in the bad interleaving.
 */
#undef NDEBUG
#include <assert.h>
#include <pthread.h>
#include <stddef.h>

static pthread_barrier_t start;
static volatile int x;
static volatile int y1, y2, y3, y4, y5, y6;

static void *thread_a(void *arg)
{
    (void)arg;
    pthread_barrier_wait(&start);
    int r = x;      /* [R x] */
    assert(r == 0); /* BUG manifests iff B's W x came first */
    return NULL;
}

static void *thread_b(void *arg)
{
    (void)arg;
    pthread_barrier_wait(&start);
    y1 = 1;
    y2 = 1;
    y3 = 1;
    y4 = 1;
    y5 = 1;
    y6 = 1;
    x = 1;
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
