/*
 * philosophers_ok.c -- dining philosophers with ordered fork acquisition
 * (bug-free).
 *
 * Pattern: N philosophers, fork i between philosopher i and i+1. Each
 *   philosopher locks the lower-numbered of its two forks first, which
 *   breaks the circular wait. Each eats MEALS times.
 * Expected: no bug in any interleaving (exit 0).
 */
#undef NDEBUG
#include <assert.h>
#include <pthread.h>
#include <stddef.h>

#define N 3
#define MEALS 2

static pthread_mutex_t fork_m[N] = {
    PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER
};
static int fork_user[N]; /* -1 when free; checked under the fork's mutex */
static int meals[N];

static void *philosopher(void *arg)
{
    int i = (int)(long)arg;
    int a = i;
    int b = (i + 1) % N;
    int first = a < b ? a : b;
    int second = a < b ? b : a;
    for (int k = 0; k < MEALS; k++) {
        pthread_mutex_lock(&fork_m[first]);
        pthread_mutex_lock(&fork_m[second]);
        assert(fork_user[first] == -1 && fork_user[second] == -1);
        fork_user[first] = fork_user[second] = i;
        meals[i]++;
        fork_user[first] = fork_user[second] = -1;
        pthread_mutex_unlock(&fork_m[second]);
        pthread_mutex_unlock(&fork_m[first]);
    }
    return NULL;
}

int main(void)
{
    pthread_t t[N];
    for (int i = 0; i < N; i++)
        fork_user[i] = -1;
    for (long i = 0; i < N; i++)
        pthread_create(&t[i], NULL, philosopher, (void *)i);
    for (int i = 0; i < N; i++)
        pthread_join(t[i], NULL);
    for (int i = 0; i < N; i++)
        assert(meals[i] == MEALS);
    return 0;
}
