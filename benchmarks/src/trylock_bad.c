/*
 * trylock_bad.c -- trylock back-off path that leaks the first lock.
 *
 * Pattern: t1 holds a and tries b with pthread_mutex_trylock; if b is busy
 *   it gives up. t2 locks b then a.
 * Bug: the give-up path returns without unlocking a. If t2 holds b when t1
 *   tries it, t1 exits still owning a and t2 blocks forever on a. (Without
 *   the bug this code cannot deadlock: nobody blocks on b while holding a.)
 *   Pthread-call points suffice.
 * Expected: deadlock (t2 in pthread_mutex_lock, main in pthread_join) in
 *   the bad interleaving, else exit 0.
 */
#undef NDEBUG
#include <assert.h>
#include <pthread.h>
#include <stddef.h>

static pthread_mutex_t a = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t b = PTHREAD_MUTEX_INITIALIZER;
static int count_a;
static int count_b;

static void *t1(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&a);
    if (pthread_mutex_trylock(&b) != 0) {
        /* b is busy: give up for now.
         * BUG: missing pthread_mutex_unlock(&a) */
        return NULL;
    }
    count_a++;
    count_b++;
    pthread_mutex_unlock(&b);
    pthread_mutex_unlock(&a);
    return NULL;
}

static void *t2(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&b);
    pthread_mutex_lock(&a);
    count_a++;
    count_b++;
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
    assert(count_a == count_b && count_a >= 1);
    return 0;
}
