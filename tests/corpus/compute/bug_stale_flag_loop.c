/* Buggy: the consumer reads the producer's flag once, under the lock, and then loops on its
 * own copy, working a chunk at a time until it turns true, which it never does if the
 * producer had not run yet. When the consumer goes first the program never ends: an endless
 * computation, no synchronisation call in the loop (natively too, if the timing says so). */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static int ready;
static uint64_t result;

static uint64_t crunch(uint64_t x, long n) {
    for (long i = 0; i < n; i++) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        __asm__ volatile("" : "+r"(x));
    }
    return x;
}

static void *producer(void *arg) {
    pthread_mutex_lock(&m);
    ready = 1;
    pthread_mutex_unlock(&m);
    return arg;
}

static void *consumer(void *arg) {
    pthread_mutex_lock(&m);
    int seen = ready;
    pthread_mutex_unlock(&m);
    uint64_t x = 1;
    while (!seen) x = crunch(x, 1000); /* BUG: `seen` is never read again */
    pthread_mutex_lock(&m);
    result = crunch(x, 1000);
    pthread_mutex_unlock(&m);
    return arg;
}

int main(void) {
    pthread_t p, c;
    pthread_create(&c, NULL, consumer, NULL);
    pthread_create(&p, NULL, producer, NULL);
    pthread_join(p, NULL);
    pthread_join(c, NULL);
    printf("%llu\n", (unsigned long long)(result & 1));
    return 0;
}
