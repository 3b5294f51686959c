/* readers(N) (Flanagan & Godefroid, POPL'05; Abdulla et al., POPL'14): one writer thread
 * `x = 1`, N reader threads `l = x`; main creates all of them, then joins all of them.
 * Each reader's read is ordered before or after the write: 2^N Mazurkiewicz traces.
 * Build with `poscheck cc -O1`, explore with `--points mem`. Usage: readers N */
#include <pthread.h>
#include <stdlib.h>

#define MAX_THREADS 64

volatile int x;

static void *writer(void *arg) {
    (void)arg;
    x = 1;
    return NULL;
}

static void *reader(void *arg) {
    (void)arg;
    int l = x;
    (void)l;
    return NULL;
}

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 3;
    if (n < 1 || n >= MAX_THREADS) return 2;
    pthread_t t[MAX_THREADS];
    pthread_create(&t[0], NULL, writer, NULL);
    for (int i = 1; i <= n; i++) pthread_create(&t[i], NULL, reader, NULL);
    for (int i = 0; i <= n; i++) pthread_join(t[i], NULL);
    return 0;
}
