/*
 * deadlock_3.c -- cyclic lock order over three mutexes and three threads.
 *
 * Pattern: thread i locks m[i] then m[(i+1)%3].
 * Bug: if every thread holds its first mutex before any gets its second,
 *   the wait-for graph is the cycle 0 -> 1 -> 2 -> 0 and all three block
 *   forever. Pthread-call points suffice.
 * Expected: deadlock in the bad interleaving, else exit 0.
 */
#undef NDEBUG
#include <assert.h>
#include <pthread.h>
#include <stddef.h>

#define N 3

static pthread_mutex_t m[N] = {
    PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER
};
static int counter;

static void *worker(void *arg)
{
    int i = (int)(long)arg;
    pthread_mutex_lock(&m[i]);
    pthread_mutex_lock(&m[(i + 1) % N]); /* BUG: cyclic lock order */
    counter++;
    pthread_mutex_unlock(&m[(i + 1) % N]);
    pthread_mutex_unlock(&m[i]);
    return NULL;
}

int main(void)
{
    pthread_t t[N];
    for (long i = 0; i < N; i++)
        pthread_create(&t[i], NULL, worker, (void *)i);
    for (int i = 0; i < N; i++)
        pthread_join(t[i], NULL);
    assert(counter == N);
    return 0;
}
