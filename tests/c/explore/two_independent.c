/* Two threads of n independent writes each (to distinct globals). DFS explores every
 * interleaving of the scheduling points; with main's create/join/exit events and the two
 * threads' exits the count is that of the program's linear extensions (see
 * runner/tests/explore.rs), while DPOR and ODPOR need a single execution.
 * Build with `poscheck cc -O1`, explore with `--points mem`. Usage: two_independent n */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#define MAX_N 16

volatile int left[MAX_N];
volatile int right[MAX_N];

/* The argument packs the side (bit 8) and n: a global or a struct on main's stack would be
 * read by the thread, a memory event of its own. */
static void *writes(void *arg) {
    intptr_t v = (intptr_t)arg;
    volatile int *cells = (v >> 8) ? right : left;
    int n = (int)(v & 0xff);
    for (int i = 0; i < n; i++) cells[i] = 1;
    return NULL;
}

int main(int argc, char **argv) {
    int size = argc > 1 ? atoi(argv[1]) : 2;
    if (size < 1 || size > MAX_N) return 2;
    pthread_t a, b;
    pthread_create(&a, NULL, writes, (void *)(intptr_t)size);
    pthread_create(&b, NULL, writes, (void *)(intptr_t)(256 + size));
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    return 0;
}
