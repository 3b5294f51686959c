// Correct: a worker sleeping in a loop (sleep, usleep and nanosleep are cancellation
// points) is cancelled; its cleanup handler frees its buffer. Never a bug.
#include <assert.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static int freed;

static void release(void *p) {
    free(p);
    freed = 1;
}

static void *worker(void *arg) {
    (void)arg;
    char *buf = malloc(64);
    pthread_cleanup_push(release, buf);
    struct timespec ts = {0, 1000};
    for (;;) {
        sleep(1);
        usleep(10);
        nanosleep(&ts, NULL);
    }
    pthread_cleanup_pop(1);
    return NULL;
}

int main(void) {
    pthread_t t;
    void *ret;
    pthread_create(&t, NULL, worker, NULL);
    pthread_cancel(t);
    pthread_join(t, &ret);
    assert(ret == PTHREAD_CANCELED);
    assert(freed);
    return 0;
}
