/*
 * dcl_init.c -- double-checked locking that publishes before initialising.
 *
 * Pattern: get_instance() checks `instance` without the lock (fast path),
 *   then locks, re-checks and creates the singleton.
 * Bug: the creating thread stores the pointer to `instance` before it
 *   initialises the fields (the effect a missing release fence / compiler
 *   reordering has in real DCL). A second thread on the fast path can see
 *   the non-NULL pointer and read uninitialised fields. The window
 *   (publish -> field stores) contains no pthread call, so memory-access
 *   scheduling points are needed.
 * Expected: assertion failure in the reading thread in the bad interleaving.
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

struct singleton {
    volatile int a;
    volatile int b;
};

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static struct singleton storage;
static struct singleton *volatile instance;

static struct singleton *get_instance(void)
{
    struct singleton *p = instance; /* first check, no lock */
    if (p == NULL) {
        pthread_mutex_lock(&m);
        p = instance; /* second check, under the lock */
        if (p == NULL) {
            p = &storage;
            instance = p; /* BUG: published before initialised */
            STRESS();
            p->a = 1;
            p->b = 2;
        }
        pthread_mutex_unlock(&m);
    }
    return p;
}

static void *user(void *arg)
{
    (void)arg;
    struct singleton *s = get_instance();
    assert(s->a == 1 && s->b == 2);
    return NULL;
}

int main(void)
{
    pthread_t t1, t2;
    pthread_create(&t1, NULL, user, NULL);
    pthread_create(&t2, NULL, user, NULL);
    pthread_join(t1, NULL);
    pthread_join(t2, NULL);
    return 0;
}
