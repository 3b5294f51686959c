/* indexer(N) (Flanagan & Godefroid, POPL'05, §5): a hash table of 128 ints; thread tid
 * (0..N-1) inserts the 4 values w = m*11 + tid (m = 1..4) at h = (w*7) % 128, probing with
 * a compare-and-swap from 0 and h = (h+1) % 128 on failure. Collisions first appear at
 * N = 12, so N = 11 has a single trace.
 * Build with `poscheck cc -O1`, explore with `--points mem`. Usage: indexer N */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#define SIZE 128
#define MAX_THREADS 32

int table[SIZE];

static void *insert(void *arg) {
    int tid = (int)(intptr_t)arg;
    for (int m = 1; m <= 4; m++) {
        int w = m * 11 + tid;
        int h = (w * 7) % SIZE;
        while (!__sync_bool_compare_and_swap(&table[h], 0, w)) h = (h + 1) % SIZE;
    }
    return NULL;
}

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 11;
    if (n < 1 || n > MAX_THREADS) return 2;
    pthread_t t[MAX_THREADS];
    for (int i = 0; i < n; i++) pthread_create(&t[i], NULL, insert, (void *)(intptr_t)i);
    for (int i = 0; i < n; i++) pthread_join(t[i], NULL);
    return 0;
}
