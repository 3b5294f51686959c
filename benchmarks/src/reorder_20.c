/*
 * reorder_20.c -- SCTBench reorder_20_bad: 19 setter threads, 1 checker.
 *
 * Pattern: each setter writes a = 1 then b = -1 (no locks). The checker
 *   reads a then b and expects to see either "nothing yet" (0, 0) or a
 *   complete update (1, -1).
 * Bug: the checker can observe a half-done update: (1, 0) if it runs between
 *   the first setter's two writes, or (0, -1) if a setter's two writes land
 *   between the checker's two reads. With more setters the window relative to
 *   the rest of the program shrinks, so the bug gets rarer under naive
 *   random scheduling. Needs memory-access scheduling points.
 * Events (excluding pthread calls): setter [W a, W b], checker [R a, R b].
 * Expected: assertion failure in the checker in the bad interleaving.
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

#define NUM_THREADS 20 /* NUM_THREADS - 1 setters + 1 checker */

static volatile int a;
static volatile int b;

static void *setter(void *arg)
{
    (void)arg;
    a = 1;
    STRESS();
    b = -1;
    return NULL;
}

static void *checker(void *arg)
{
    (void)arg;
    int ra = a;
    STRESS();
    int rb = b;
    assert((ra == 0 && rb == 0) || (ra == 1 && rb == -1));
    return NULL;
}

int main(void)
{
    pthread_t t[NUM_THREADS];
    for (int i = 0; i < NUM_THREADS - 1; i++)
        pthread_create(&t[i], NULL, setter, NULL);
    pthread_create(&t[NUM_THREADS - 1], NULL, checker, NULL);
    for (int i = 0; i < NUM_THREADS; i++)
        pthread_join(t[i], NULL);
    return 0;
}
