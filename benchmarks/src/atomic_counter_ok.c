/*
 * atomic_counter_ok.c -- shared counter updated with __atomic_fetch_add
 * (bug-free).
 *
 * Pattern: NT threads each add 1 to a counter ITERS times with an atomic
 *   RMW, and record the returned tickets; every ticket must be unique.
 * Expected: no bug in any interleaving (exit 0).
 */
#undef NDEBUG
#include <assert.h>
#include <pthread.h>
#include <stddef.h>

#define NT 3
#define ITERS 3

static int counter;
static int ticket_seen[NT * ITERS];

static void *worker(void *arg)
{
    (void)arg;
    for (int i = 0; i < ITERS; i++) {
        int ticket = __atomic_fetch_add(&counter, 1, __ATOMIC_SEQ_CST);
        assert(ticket >= 0 && ticket < NT * ITERS);
        int prev = __atomic_exchange_n(&ticket_seen[ticket], 1, __ATOMIC_SEQ_CST);
        assert(prev == 0);
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
    assert(__atomic_load_n(&counter, __ATOMIC_SEQ_CST) == NT * ITERS);
    for (int i = 0; i < NT * ITERS; i++)
        assert(ticket_seen[i] == 1);
    return 0;
}
