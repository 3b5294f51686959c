/*
 * trylock_ok.c -- two-lock acquisition with trylock back-off (bug-free;
 * compare trylock_bad.c).
 *
 * Pattern: each of NT threads needs mutexes a and b. It locks a and tries
 *   b; if b is busy it releases a, then blocks on b and then a. Nobody ever
 *   blocks on b while holding a, so no wait-for cycle can form, and the
 *   back-off path is a single blocking retry (no spinning).
 * Expected: no bug in any interleaving (exit 0).
 */
#undef NDEBUG
#include <assert.h>
#include <pthread.h>
#include <stddef.h>

#define NT 3

static pthread_mutex_t a = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t b = PTHREAD_MUTEX_INITIALIZER;
static int count_a;
static int count_b;
static int backoffs;

static void *worker(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&a);
    if (pthread_mutex_trylock(&b) != 0) {
        pthread_mutex_unlock(&a);
        pthread_mutex_lock(&b);
        pthread_mutex_lock(&a);
        backoffs++; /* protected by a and b */
    }
    count_a++;
    count_b++;
    assert(count_a == count_b);
    pthread_mutex_unlock(&b);
    pthread_mutex_unlock(&a);
    return NULL;
}

int main(void)
{
    pthread_t t[NT];
    for (int i = 0; i < NT; i++)
        pthread_create(&t[i], NULL, worker, NULL);
    for (int i = 0; i < NT; i++)
        pthread_join(t[i], NULL);
    assert(count_a == NT && count_b == NT);
    assert(backoffs <= NT);
    return 0;
}
