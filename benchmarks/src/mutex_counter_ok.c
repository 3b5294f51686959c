/*
 * mutex_counter_ok.c -- shared counter protected by a mutex (bug-free).
 *
 * Pattern: NT threads each increment a shared counter ITERS times, every
 *   read-modify-write inside pthread_mutex_lock/unlock.
 * Expected: no bug in any interleaving (exit 0).
 */
#undef NDEBUG
#include <assert.h>
#include <pthread.h>
#include <stddef.h>

#define NT 3
#define ITERS 3

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static int counter;

static void *worker(void *arg)
{
    (void)arg;
    for (int i = 0; i < ITERS; i++) {
        pthread_mutex_lock(&m);
        int v = counter;
        counter = v + 1;
        pthread_mutex_unlock(&m);
    }
    return NULL;
}

int main(void)
{
    pthread_t t[NT];
    for (int i = 0; i < NT; i++)
        pthread_create(&t[i], NULL, worker, NULL);
    for (int i = 0; i < NT; i++)
        pthread_join(t[i], NULL);
    assert(counter == NT * ITERS);
    return 0;
}
