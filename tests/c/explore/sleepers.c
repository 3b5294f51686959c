/* sleepers: two workers sleep the same virtual time, then each takes a lock and the first to
 * get it writes its number. Time passes only once every thread is blocked, so both wake at
 * the same deadline and either may lock first: 2 traces. With `late` as argv[1] worker 2
 * sleeps longer: worker 1 always locks first (1 trace). main asserts worker 1 was first, so
 * the same-deadline program has a bug in one trace. Explore with `--points sync`. */
#include <assert.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static long first;
static int late;

static void *worker(void *arg) {
    usleep(late && (long)arg == 2 ? 2000 : 1000);
    pthread_mutex_lock(&m);
    if (!first) first = (long)arg;
    pthread_mutex_unlock(&m);
    return NULL;
}

int main(int argc, char **argv) {
    late = argc > 1 && strcmp(argv[1], "late") == 0;
    pthread_t t1, t2;
    pthread_create(&t1, NULL, worker, (void *)1);
    pthread_create(&t2, NULL, worker, (void *)2);
    pthread_join(t1, NULL);
    pthread_join(t2, NULL);
    assert(first == 1);
    return 0;
}
