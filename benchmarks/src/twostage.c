/*
 * twostage.c -- SCTBench twostage_bad: two-stage update under two locks.
 *
 * Pattern: the stage thread sets data1 under m1, releases m1, then sets
 *   data2 = data1 + 1 under m2. The checker reads data1 under m1 and data2
 *   under m2 and expects data2 == data1 + 1 once data1 is set.
 * Bug: the invariant is only established after the second critical
 *   section; the checker can run completely between the stage thread's
 *   unlock(m1) and lock(m2). Reachable with pthread-call points only.
 * Expected: assertion failure in the checker in the bad interleaving.
 */
#undef NDEBUG
#include <assert.h>
#include <pthread.h>
#include <stddef.h>

static pthread_mutex_t m1 = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t m2 = PTHREAD_MUTEX_INITIALIZER;
static int data1;
static int data2;

static void *stage(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&m1);
    data1 = 1;
    pthread_mutex_unlock(&m1);
    /* BUG: data1 is visible but data2 is not yet consistent */
    pthread_mutex_lock(&m2);
    data2 = data1 + 1;
    pthread_mutex_unlock(&m2);
    return NULL;
}

static void *check(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&m1);
    if (data1 == 0) {
        pthread_mutex_unlock(&m1);
        return NULL;
    }
    int t1 = data1;
    pthread_mutex_unlock(&m1);
    pthread_mutex_lock(&m2);
    int t2 = data2;
    pthread_mutex_unlock(&m2);
    assert(t2 == t1 + 1);
    return NULL;
}

int main(void)
{
    pthread_t a, b;
    pthread_create(&a, NULL, stage, NULL);
    pthread_create(&b, NULL, check, NULL);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    return 0;
}
