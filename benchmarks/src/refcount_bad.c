/*
 * refcount_bad.c -- non-atomic reference count release (double free / leak).
 *
 * Pattern: an object with refs == 2 is released by two threads. release()
 *   decrements with a plain load/store and then re-reads refs to decide
 *   whether to free. Frees are checked by a `freed` flag (no real free()).
 * Bug: (1) both threads read refs == 2 and store 1: the object is never
 *   freed (leak, caught in main); (2) both decrement, then both re-read 0:
 *   double free (caught in obj_free). Needs memory-access scheduling points.
 * Expected: assertion failure ("double free" or "object leaked") in the bad
 *   interleaving.
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

struct obj {
    volatile int refs;
    volatile int freed;
};

static struct obj o = { 2, 0 };

static void obj_free(struct obj *p)
{
    assert(!p->freed && "double free");
    p->freed = 1;
}

static void release(struct obj *p)
{
    int r = p->refs;
    STRESS();
    p->refs = r - 1; /* BUG: not an atomic decrement */
    STRESS();
    if (p->refs == 0) /* BUG: re-reads instead of using r - 1 */
        obj_free(p);
}

static void *user(void *arg)
{
    (void)arg;
    release(&o);
    return NULL;
}

int main(void)
{
    pthread_t a, b;
    pthread_create(&a, NULL, user, NULL);
    pthread_create(&b, NULL, user, NULL);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    assert(o.freed == 1 && "object leaked");
    return 0;
}
