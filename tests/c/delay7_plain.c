/*
 * delay7_plain.c -- delay-m (m = 7) without the start barrier, for the
 * theory-vs-practice test (runner/tests/points.rs): its whole event structure
 * under `poscheck cc` + `--points mem` is expressible by the simulator
 * (benchmarks/models/delay7-real.model):
 *   main: create A; create B; join A; join B; exit(0)
 *   A:    [R x]; exit
 *   B:    [W y1 .. W y6, W x]; exit
 * Every other variable is on a stack (never a scheduling point).
 * Bug: B's W x happens before A's R x (A's assertion fails).
 */
#undef NDEBUG
#include <assert.h>
#include <pthread.h>
#include <stddef.h>

static volatile int x;
static volatile int y1, y2, y3, y4, y5, y6;

static void *thread_a(void *arg)
{
    (void)arg;
    int r = x;      /* [R x] */
    assert(r == 0); /* BUG manifests iff B's W x came first */
    return NULL;
}

static void *thread_b(void *arg)
{
    (void)arg;
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
    pthread_create(&a, NULL, thread_a, NULL);
    pthread_create(&b, NULL, thread_b, NULL);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    return 0;
}
