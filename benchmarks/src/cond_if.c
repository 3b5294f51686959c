/*
 * cond_if.c -- condition variable wait guarded by `if` instead of `while`.
 *
 * Pattern: two consumers each take one item: lock; if (items == 0) wait;
 *   take; unlock. A producer adds two items, signalling after each.
 * Bug: a woken consumer does not re-check the predicate. Between the
 *   producer's signal and the woken consumer re-acquiring the mutex, the
 *   other consumer can lock, see items == 1 and take the item; the woken
 *   consumer then takes from an empty pool. (A spurious wakeup has the same
 *   effect.) Pthread-call points suffice.
 * Expected: assertion failure in a consumer in the bad interleaving.
 */
#undef NDEBUG
#include <assert.h>
#include <pthread.h>
#include <stddef.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int items;
static int consumed;

static void *consumer(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&m);
    if (items == 0) /* BUG: should be `while` */
        pthread_cond_wait(&cv, &m);
    assert(items > 0);
    items--;
    consumed++;
    pthread_mutex_unlock(&m);
    return NULL;
}

static void *producer(void *arg)
{
    (void)arg;
    for (int k = 0; k < 2; k++) {
        pthread_mutex_lock(&m);
        items++;
        pthread_cond_signal(&cv);
        pthread_mutex_unlock(&m);
    }
    return NULL;
}

int main(void)
{
    pthread_t c1, c2, p;
    pthread_create(&c1, NULL, consumer, NULL);
    pthread_create(&c2, NULL, consumer, NULL);
    pthread_create(&p, NULL, producer, NULL);
    pthread_join(c1, NULL);
    pthread_join(c2, NULL);
    pthread_join(p, NULL);
    assert(consumed == 2 && items == 0);
    return 0;
}
