// Asynchronous cancellation: a worker switches to PTHREAD_CANCEL_ASYNCHRONOUS and computes
// without any cancellation point; main cancels it while it computes and joins it. Correct
// on a real system (the thread is cancelled wherever it is, its cleanup handler runs).
// libpos cannot stop a thread between scheduling points: the runner sets the computing
// thread aside (partial runs) and the real cancellation reaches it. Never a bug.
#include <assert.h>
#include <pthread.h>
#include <semaphore.h>

static sem_t started;
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static volatile unsigned long work;
static int cleaned;

static void mark(void *arg) {
    (void)arg;
    pthread_mutex_lock(&m);
    cleaned++;
    pthread_mutex_unlock(&m);
}

static void *worker(void *arg) {
    (void)arg;
    int old;
    pthread_cleanup_push(mark, NULL);
    pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, &old);
    assert(old == PTHREAD_CANCEL_DEFERRED);
    sem_post(&started);
    for (;;)
        work++;
    pthread_cleanup_pop(0);
    return NULL;
}

int main(void) {
    pthread_t t;
    void *ret;
    sem_init(&started, 0, 0);
    pthread_create(&t, NULL, worker, NULL);
    sem_wait(&started);
    pthread_cancel(t);
    pthread_join(t, &ret);
    assert(ret == PTHREAD_CANCELED);
    pthread_mutex_lock(&m);
    assert(cleaned == 1);
    pthread_mutex_unlock(&m);
    return 0;
}
