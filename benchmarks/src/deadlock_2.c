/*
 * deadlock_2.c -- lock-order inversion with two mutexes.
 *
 * Pattern: thread 1 locks a then b; thread 2 locks b then a.
 * Bug: if each thread gets its first lock before the other gets its second,
 *   both block forever in pthread_mutex_lock. Pthread-call points suffice.
 * Expected: deadlock in the bad interleaving, else exit 0.
 */
#undef NDEBUG
#include <assert.h>
#include <pthread.h>
#include <stddef.h>

static pthread_mutex_t a = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t b = PTHREAD_MUTEX_INITIALIZER;
static int counter;

static void *t1(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&a);
    pthread_mutex_lock(&b);
    counter++;
    pthread_mutex_unlock(&b);
    pthread_mutex_unlock(&a);
    return NULL;
}

static void *t2(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&b); /* BUG: opposite lock order */
    pthread_mutex_lock(&a);
    counter++;
    pthread_mutex_unlock(&a);
    pthread_mutex_unlock(&b);
    return NULL;
}

int main(void)
{
    pthread_t x, y;
    pthread_create(&x, NULL, t1, NULL);
    pthread_create(&y, NULL, t2, NULL);
    pthread_join(x, NULL);
    pthread_join(y, NULL);
    assert(counter == 2);
    return 0;
}
