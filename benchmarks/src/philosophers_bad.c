/*
 * philosophers_bad.c -- dining philosophers, everyone takes the left fork
 * first.
 *
 * Pattern: N philosophers, fork i between philosopher i and i+1.
 *   Philosopher i locks fork i, then fork (i+1)%N, eats, releases both.
 * Bug: if every philosopher grabs the left fork before anyone grabs a right
 *   fork, all block forever (circular wait). Pthread-call points suffice.
 * Expected: deadlock in the bad interleaving, else exit 0.
 */
#undef NDEBUG
#include <assert.h>
#include <pthread.h>
#include <stddef.h>

#define N 3
#define MEALS 1

static pthread_mutex_t fork_m[N] = {
    PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER
};
static int meals[N];

static void *philosopher(void *arg)
{
    int i = (int)(long)arg;
    int left = i;
    int right = (i + 1) % N;
    for (int k = 0; k < MEALS; k++) {
        pthread_mutex_lock(&fork_m[left]);  /* BUG: same-handed grab order */
        pthread_mutex_lock(&fork_m[right]);
        meals[i]++;
        pthread_mutex_unlock(&fork_m[right]);
        pthread_mutex_unlock(&fork_m[left]);
    }
    return NULL;
}

int main(void)
{
    pthread_t t[N];
    for (long i = 0; i < N; i++)
        pthread_create(&t[i], NULL, philosopher, (void *)i);
    for (int i = 0; i < N; i++)
        pthread_join(t[i], NULL);
    for (int i = 0; i < N; i++)
        assert(meals[i] == MEALS);
    return 0;
}
