/*
 * barrier_phase.c -- phased computation with a misplaced barrier.
 *
 * Pattern: NT workers; phase 1 writes slot[i] = i + 1, then a barrier, then
 *   each worker reads its right neighbour's phase-1 value and immediately
 *   overwrites its own slot with its phase-2 value; a barrier ends phase 2.
 * Bug: a barrier is missing between "read neighbour" and "overwrite own
 *   slot", so a fast neighbour may already have overwritten the value this
 *   worker is about to read. After the barrier releases, each worker runs
 *   its read+write segment without a pthread call, so pthread-call points
 *   suffice to expose it (the order in which released workers run).
 * Expected: assertion failure in a worker in the bad interleaving.
 */
#undef NDEBUG
#include <assert.h>
#include <pthread.h>
#include <stddef.h>

#define NT 3

static pthread_barrier_t bar;
static volatile int slot[NT];
static int result[NT];

static void *worker(void *arg)
{
    int i = (int)(long)arg;
    int right = (i + 1) % NT;
    slot[i] = i + 1;                 /* phase 1 */
    pthread_barrier_wait(&bar);
    int nb = slot[right];            /* read neighbour's phase-1 value */
    /* BUG: missing pthread_barrier_wait(&bar) here */
    slot[i] = 100 + i;               /* phase 2 overwrites own slot */
    assert(nb == right + 1);
    pthread_barrier_wait(&bar);
    result[i] = nb + slot[right];
    return NULL;
}

int main(void)
{
    pthread_t t[NT];
    pthread_barrier_init(&bar, NULL, NT);
    for (long i = 0; i < NT; i++)
        pthread_create(&t[i], NULL, worker, (void *)i);
    for (int i = 0; i < NT; i++)
        pthread_join(t[i], NULL);
    pthread_barrier_destroy(&bar);
    for (int i = 0; i < NT; i++)
        assert(result[i] == (i + 1) % NT + 1 + 100 + (i + 1) % NT);
    return 0;
}
