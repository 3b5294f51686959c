/* lastzero(N) (Abdulla et al., POPL'14, Table 1): int a[N+1]; thread 0 scans for the last
 * zero, `for (i = N; a[i] != 0; i--);`; thread j = 1..N does `a[j] = a[j-1] + 1`. Main
 * creates thread 0 first, then 1..N, and joins them in that order.
 * Build with `poscheck cc -O1`, explore with `--points mem`. Usage: lastzero N */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#define MAX_N 62

volatile int a[MAX_N + 1];

/* N comes as the argument: a global would add a memory event of its own. */
static void *scan(void *arg) {
    int n = (int)(intptr_t)arg;
    int i;
    for (i = n; a[i] != 0; i--) {
    }
    return NULL;
}

static void *inc(void *arg) {
    int j = (int)(intptr_t)arg;
    a[j] = a[j - 1] + 1;
    return NULL;
}

int main(int argc, char **argv) {
    int size = argc > 1 ? atoi(argv[1]) : 5;
    if (size < 1 || size > MAX_N) return 2;
    pthread_t t[MAX_N + 1];
    pthread_create(&t[0], NULL, scan, (void *)(intptr_t)size);
    for (int j = 1; j <= size; j++) pthread_create(&t[j], NULL, inc, (void *)(intptr_t)j);
    for (int j = 0; j <= size; j++) pthread_join(t[j], NULL);
    return 0;
}
