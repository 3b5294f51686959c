/*
 * wsq_bad.c -- Chase-Lev work-stealing deque without the CAS on the last
 * element.
 *
 * Pattern: the owner pushes 2 items at the bottom and then takes twice from
 *   the bottom; a thief tries to steal (CAS on `top`) twice from the top.
 *   Every successfully obtained item is claimed; an item must be claimed at
 *   most once.
 * Bug: when take() finds exactly one element left (t == b) it must race the
 *   thieves for it with CAS(&top, t, t+1). This version just stores
 *   top = t + 1, so a thief that read the old bottom and whose CAS lands
 *   between the owner's read of top and its store also gets the element:
 *   the same item is taken twice. Needs memory-access scheduling points.
 * Expected: assertion failure ("item taken twice") in the bad interleaving.
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

#define CAP 8
#define NITEMS 2
#define EMPTY (-1)
#define ABORT (-2)

static long top;
static volatile long bottom;
static volatile int buf[CAP];
static int taken[NITEMS + 1];

static void claim(int v)
{
    int prev = __atomic_fetch_add(&taken[v], 1, __ATOMIC_SEQ_CST);
    assert(prev == 0 && "item taken twice");
}

static void push(int v)
{
    long b = bottom;
    buf[b % CAP] = v;
    bottom = b + 1;
}

static int take(void)
{
    long b = bottom - 1;
    bottom = b;
    long t = __atomic_load_n(&top, __ATOMIC_SEQ_CST);
    if (t > b) { /* empty */
        bottom = t;
        return EMPTY;
    }
    int v = buf[b % CAP];
    if (t < b) /* more than one element: no race possible */
        return v;
    /* Exactly one element left: race with thieves for it.
     * BUG: must be `if (!CAS(&top, t, t + 1)) { bottom = t + 1; return EMPTY; }` */
    STRESS();
    __atomic_store_n(&top, t + 1, __ATOMIC_SEQ_CST);
    bottom = t + 1;
    return v;
}

static int steal(void)
{
    long t = __atomic_load_n(&top, __ATOMIC_SEQ_CST);
    long b = bottom;
    if (t >= b)
        return EMPTY;
    int v = buf[t % CAP];
    STRESS();
    if (!__atomic_compare_exchange_n(&top, &t, t + 1, 0, __ATOMIC_SEQ_CST,
                                     __ATOMIC_SEQ_CST))
        return ABORT;
    return v;
}

static void *owner(void *arg)
{
    (void)arg;
    for (int i = 1; i <= NITEMS; i++)
        push(i);
    for (int i = 0; i < NITEMS; i++) {
        int v = take();
        if (v > 0)
            claim(v);
    }
    return NULL;
}

static void *thief(void *arg)
{
    (void)arg;
    for (int i = 0; i < 2; i++) {
        int v = steal();
        if (v > 0)
            claim(v);
    }
    return NULL;
}

int main(void)
{
    pthread_t o, t;
    pthread_create(&o, NULL, owner, NULL);
    pthread_create(&t, NULL, thief, NULL);
    pthread_join(o, NULL);
    pthread_join(t, NULL);
    for (int i = 1; i <= NITEMS; i++)
        assert(taken[i] == 1);
    return 0;
}
