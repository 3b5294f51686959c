/* filesystem(N) (Flanagan & Godefroid, POPL'05, §5): 32 inode locks and 26 block locks,
 * int inode[32], busy[26]. Thread tid (0..N-1) takes inode i = tid % 32 and, if it has no
 * block, allocates the first free block from (i*2) % 26 on, under that block's lock.
 * Threads conflict only from N = 14 on (inodes 0 and 13 both start at block 0).
 * Build with `poscheck cc -O1`, explore with `--points mem`. Usage: filesystem N */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#define NUMINODE 32
#define NUMBLOCKS 26
#define MAX_THREADS 64

pthread_mutex_t locki[NUMINODE];
pthread_mutex_t lockb[NUMBLOCKS];
volatile int inode[NUMINODE];
volatile int busy[NUMBLOCKS];

static void *thread(void *arg) {
    int tid = (int)(intptr_t)arg;
    int i = tid % NUMINODE;
    pthread_mutex_lock(&locki[i]);
    if (inode[i] == 0) {
        int b = (i * 2) % NUMBLOCKS;
        for (;;) {
            pthread_mutex_lock(&lockb[b]);
            if (!busy[b]) {
                busy[b] = 1;
                inode[i] = b + 1;
                pthread_mutex_unlock(&lockb[b]);
                break;
            }
            pthread_mutex_unlock(&lockb[b]);
            b = (b + 1) % NUMBLOCKS;
        }
    }
    pthread_mutex_unlock(&locki[i]);
    return NULL;
}

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 13;
    if (n < 1 || n > MAX_THREADS) return 2;
    /* The mutexes are zero-initialised globals, which is PTHREAD_MUTEX_INITIALIZER on glibc. */
    pthread_t t[MAX_THREADS];
    for (int i = 0; i < n; i++) pthread_create(&t[i], NULL, thread, (void *)(intptr_t)i);
    for (int i = 0; i < n; i++) pthread_join(t[i], NULL);
    return 0;
}
