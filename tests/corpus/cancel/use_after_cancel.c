// Buggy: main cancels the worker but uses the worker's buffer without joining first; the
// worker's cleanup handler frees it (and clears the pointer) when the cancellation is acted
// on, which may happen before main's use.
#include <assert.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <stdlib.h>

static sem_t ready, never;
static int *data;

static void release(void *arg) {
    (void)arg;
    free(data);
    data = NULL;
}

static void *worker(void *arg) {
    (void)arg;
    data = malloc(sizeof *data);
    *data = 42;
    pthread_cleanup_push(release, NULL);
    sem_post(&ready);
    sem_wait(&never);
    pthread_cleanup_pop(1);
    return NULL;
}

int main(void) {
    pthread_t t;
    sem_init(&ready, 0, 0);
    sem_init(&never, 0, 0);
    pthread_create(&t, NULL, worker, NULL);
    sem_wait(&ready);
    pthread_cancel(t);
    sched_yield();
    int *p = data;
    assert(p != NULL && "buffer used after the worker was cancelled");
    pthread_join(t, NULL);
    return 0;
}
