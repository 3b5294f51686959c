// Correct: a worker polls with pthread_testcancel (yielding between polls) until it is
// cancelled; its cleanup handler runs and join returns PTHREAD_CANCELED. Never a bug.
#include <assert.h>
#include <pthread.h>
#include <sched.h>

static int cleaned;

static void mark(void *arg) {
    (void)arg;
    cleaned = 1;
}

static void *worker(void *arg) {
    (void)arg;
    pthread_cleanup_push(mark, NULL);
    for (;;) {
        pthread_testcancel();
        sched_yield();
    }
    pthread_cleanup_pop(0);
    return NULL;
}

int main(void) {
    pthread_t t;
    void *ret;
    pthread_create(&t, NULL, worker, NULL);
    sched_yield();
    pthread_cancel(t);
    pthread_join(t, &ret);
    assert(ret == PTHREAD_CANCELED);
    assert(cleaned);
    return 0;
}
