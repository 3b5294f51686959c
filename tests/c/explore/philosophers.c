/* Dining philosophers, deadlock-prone: philosopher i locks fork i, then fork (i+1) % N, then
 * unlocks both. Synchronisation only: explore with `--points sync` (rt and odpor must agree:
 * 2^N - 1 executions, one of them the deadlock where every philosopher holds one fork).
 * Usage: philosophers N */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#define MAX_N 16

static pthread_mutex_t forks[MAX_N];
static int n;

static void *philosopher(void *arg) {
    int i = (int)(intptr_t)arg;
    int j = (i + 1) % n;
    pthread_mutex_lock(&forks[i]);
    pthread_mutex_lock(&forks[j]);
    pthread_mutex_unlock(&forks[j]);
    pthread_mutex_unlock(&forks[i]);
    return NULL;
}

int main(int argc, char **argv) {
    n = argc > 1 ? atoi(argv[1]) : 3;
    if (n < 2 || n > MAX_N) return 2;
    for (int i = 0; i < n; i++) pthread_mutex_init(&forks[i], NULL);
    pthread_t t[MAX_N];
    for (int i = 0; i < n; i++) pthread_create(&t[i], NULL, philosopher, (void *)(intptr_t)i);
    for (int i = 0; i < n; i++) pthread_join(t[i], NULL);
    return 0;
}
