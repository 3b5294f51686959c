/* Correct: a thread-specific-data destructor updates a counter under the mutex main holds
 * while it checks, for 50 ms of clock reads, that the counter does not change. Before
 * 2026-11-27 the destructor ran after the thread's exit in the model, uncontrolled: its
 * lock ignored main's and the assertion failed in some runs. */
#include <assert.h>
#include <pthread.h>
#include <sched.h>
#include <time.h>

static pthread_key_t key;
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static volatile int x; /* read again on every check */

static void dtor(void *p) {
    (void)p;
    pthread_mutex_lock(&m);
    x++;
    pthread_mutex_unlock(&m);
}

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC_RAW, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

static void *worker(void *arg) {
    pthread_setspecific(key, (void *)1);
    return arg;
}

int main(void) {
    pthread_key_create(&key, dtor);
    pthread_t t;
    pthread_create(&t, NULL, worker, NULL);
    pthread_mutex_lock(&m);
    int v = x;
    sched_yield();
    for (double t0 = now(); now() - t0 < 0.05;)
        assert(x == v);
    pthread_mutex_unlock(&m);
    pthread_join(t, NULL);
    assert(x == 1);
    return 0;
}
