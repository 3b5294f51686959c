/* Correct: a worker holds the mutex with a cleanup handler that unlocks it and leaves with
 * pthread_exit from a nested call. Before 2026-11-27 the unwind ran after the thread's exit
 * in the model, uncontrolled: the unlock never reached it, a deadlock in every run. */
#include <assert.h>
#include <pthread.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static int state;

static void unlock_it(void *p) { pthread_mutex_unlock(p); }

static void finish(void) {
    state = 1;
    pthread_exit(NULL);
}

static void *worker(void *arg) {
    pthread_mutex_lock(&m);
    pthread_cleanup_push(unlock_it, &m);
    finish();
    pthread_cleanup_pop(1);
    return arg;
}

int main(void) {
    pthread_t t;
    pthread_create(&t, NULL, worker, NULL);
    pthread_mutex_lock(&m);
    pthread_mutex_unlock(&m);
    pthread_join(t, NULL);
    pthread_mutex_lock(&m);
    assert(state == 1);
    pthread_mutex_unlock(&m);
    return 0;
}
