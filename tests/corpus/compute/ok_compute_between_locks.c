/* Correct: workers compute for a while with no synchronisation call (a compressor's block, a
 * solver's step), then merge their result under a mutex and signal main, which waits on a
 * condition variable; main also computes its own share while holding nothing. While a worker
 * computes, every other thread may be blocked in the model (nothing else can run).
 * argv[1]: rounds per chunk in millions (default 100), argv[2]: workers (1-4, default 2). */
#include <assert.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t merged_cv = PTHREAD_COND_INITIALIZER;
static uint64_t total;
static int merged;
static long rounds = 100;

/* A chain of dependent multiplications the compiler cannot fold or vectorise. */
static uint64_t crunch(uint64_t x, long millions) {
    for (long i = 0; i < millions * 1000000L; i++) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        __asm__ volatile("" : "+r"(x));
    }
    return x;
}

static void *worker(void *arg) {
    uint64_t h = crunch((uintptr_t)arg, rounds);
    pthread_mutex_lock(&m);
    total ^= h;
    merged++;
    pthread_cond_signal(&merged_cv);
    pthread_mutex_unlock(&m);
    return NULL;
}

int main(int argc, char **argv) {
    if (argc > 1) rounds = atol(argv[1]);
    int n = argc > 2 ? atoi(argv[2]) : 2;
    if (n < 1 || n > 4) return 2;
    pthread_t t[4];
    for (long i = 0; i < n; i++) pthread_create(&t[i], NULL, worker, (void *)(i + 1));
    uint64_t mine = crunch(0, rounds / 2);
    pthread_mutex_lock(&m);
    while (merged < n) pthread_cond_wait(&merged_cv, &m);
    pthread_mutex_unlock(&m);
    for (int i = 0; i < n; i++) pthread_join(t[i], NULL);
    assert(merged == n);
    return (int)(mine & 0) + (total == 0 ? 3 : 0);
}
