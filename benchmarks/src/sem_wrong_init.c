/*
 * sem_wrong_init.c -- semaphore used as a mutex but initialised to 2.
 *
 * Pattern: workers protect a read-modify-write of `shared` with
 *   sem_wait/sem_post; inside the critical section they also bump a
 *   statistics counter under a separate pthread mutex.
 * Bug: sem_init(&sem, 0, 2) admits two threads at once, so two workers can
 *   both read `shared` before either writes it back (lost update). The
 *   statistics mutex puts pthread calls inside the window, so pthread-call
 *   points suffice.
 * Expected: assertion failure in main (shared != NWORKERS) in the bad
 *   interleaving.
 */
#undef NDEBUG
#include <assert.h>
#include <pthread.h>
#include <semaphore.h>
#include <stddef.h>

#define NWORKERS 3

static sem_t sem;
static pthread_mutex_t stats_m = PTHREAD_MUTEX_INITIALIZER;
static int ops;
static int shared;

static void *worker(void *arg)
{
    (void)arg;
    sem_wait(&sem);
    int v = shared;
    pthread_mutex_lock(&stats_m);
    ops++;
    pthread_mutex_unlock(&stats_m);
    shared = v + 1;
    sem_post(&sem);
    return NULL;
}

int main(void)
{
    pthread_t t[NWORKERS];
    sem_init(&sem, 0, 2); /* BUG: should be 1 for mutual exclusion */
    for (int i = 0; i < NWORKERS; i++)
        pthread_create(&t[i], NULL, worker, NULL);
    for (int i = 0; i < NWORKERS; i++)
        pthread_join(t[i], NULL);
    sem_destroy(&sem);
    assert(ops == NWORKERS);
    assert(shared == NWORKERS);
    return 0;
}
