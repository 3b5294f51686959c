/*
 * barrier_ok.c -- phased stencil computation with correctly placed
 * barriers (bug-free; compare barrier_phase.c).
 *
 * Pattern: NT workers, PHASES phases. In each phase a worker reads its
 *   right neighbour's value from the previous phase, waits on the barrier
 *   (everyone has read), then writes its own new value and waits again
 *   (everyone has written). Reads and writes of a phase never overlap.
 * Expected: no bug in any interleaving (exit 0).
 */
#undef NDEBUG
#include <assert.h>
#include <pthread.h>
#include <stddef.h>

#define NT 3
#define PHASES 2

static pthread_barrier_t bar;
static int slot[NT];

static void *worker(void *arg)
{
    int i = (int)(long)arg;
    int right = (i + 1) % NT;
    for (int p = 0; p < PHASES; p++) {
        int nb = slot[right];
        pthread_barrier_wait(&bar); /* all reads of phase p done */
        slot[i] = slot[i] + nb + 1;
        pthread_barrier_wait(&bar); /* all writes of phase p done */
    }
    return NULL;
}

int main(void)
{
    pthread_t t[NT];
    pthread_barrier_init(&bar, NULL, NT);
    for (int i = 0; i < NT; i++)
        slot[i] = i;
    for (long i = 0; i < NT; i++)
        pthread_create(&t[i], NULL, worker, (void *)i);
    for (int i = 0; i < NT; i++)
        pthread_join(t[i], NULL);
    pthread_barrier_destroy(&bar);
    /* sequential reference */
    int ref[NT], tmp[NT];
    for (int i = 0; i < NT; i++)
        ref[i] = i;
    for (int p = 0; p < PHASES; p++) {
        for (int i = 0; i < NT; i++)
            tmp[i] = ref[i] + ref[(i + 1) % NT] + 1;
        for (int i = 0; i < NT; i++)
            ref[i] = tmp[i];
    }
    for (int i = 0; i < NT; i++)
        assert(slot[i] == ref[i]);
    return 0;
}
