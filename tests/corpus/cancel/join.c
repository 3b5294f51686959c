// Correct: a waiter blocked in pthread_join (a cancellation point) on a thread that waits
// for a semaphore is cancelled; main then lets the other thread finish and joins both.
#include <assert.h>
#include <pthread.h>
#include <semaphore.h>

static sem_t go;
static pthread_t sleeper;
static int cleaned;

static void mark(void *arg) {
    (void)arg;
    cleaned = 1;
}

static void *sleeper_fn(void *arg) {
    (void)arg;
    sem_wait(&go);
    return (void *)7;
}

static void *waiter(void *arg) {
    (void)arg;
    pthread_cleanup_push(mark, NULL);
    pthread_join(sleeper, NULL);
    pthread_cleanup_pop(0);
    return NULL;
}

int main(void) {
    pthread_t w;
    void *ret;
    sem_init(&go, 0, 0);
    pthread_create(&sleeper, NULL, sleeper_fn, NULL);
    pthread_create(&w, NULL, waiter, NULL);
    pthread_cancel(w);
    pthread_join(w, &ret);
    assert(ret == PTHREAD_CANCELED);
    assert(cleaned);
    sem_post(&go);
    pthread_join(sleeper, &ret);
    assert(ret == (void *)7);
    return 0;
}
