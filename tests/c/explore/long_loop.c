/* long_loop N: main and one worker each take a mutex N times (4N + a few scheduling points),
 * then main checks the count. Correct for every N; with a large N a run is longer than
 * explore's default step limit (10000), which is no bug. Explore with `--points sync`. */
#include <assert.h>
#include <pthread.h>
#include <stdlib.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static long counter, n;

static void *work(void *arg) {
    for (long i = 0; i < n; i++) {
        pthread_mutex_lock(&m);
        counter++;
        pthread_mutex_unlock(&m);
    }
    return arg;
}

int main(int argc, char **argv) {
    n = argc > 1 ? atol(argv[1]) : 10;
    pthread_t t;
    pthread_create(&t, NULL, work, NULL);
    work(NULL);
    pthread_join(t, NULL);
    assert(counter == 2 * n);
    return 0;
}
