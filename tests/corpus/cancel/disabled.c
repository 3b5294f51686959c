// Correct: a worker disables cancellation around its critical work; main's cancel stays
// pending across the worker's sem_wait (which returns normally) until the worker enables
// cancellation again and reaches pthread_testcancel. Never a bug.
#include <assert.h>
#include <pthread.h>
#include <semaphore.h>

static sem_t started, go;
static int did_work;

static void *worker(void *arg) {
    (void)arg;
    int old;
    pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &old);
    assert(old == PTHREAD_CANCEL_ENABLE);
    sem_post(&started);
    sem_wait(&go);
    did_work = 1;
    pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, &old);
    assert(old == PTHREAD_CANCEL_DISABLE);
    pthread_testcancel();
    assert(!"cancellation was not acted on at pthread_testcancel");
    return NULL;
}

int main(void) {
    pthread_t t;
    void *ret;
    sem_init(&started, 0, 0);
    sem_init(&go, 0, 0);
    pthread_create(&t, NULL, worker, NULL);
    sem_wait(&started);
    pthread_cancel(t);
    sem_post(&go);
    pthread_join(t, &ret);
    assert(ret == PTHREAD_CANCELED);
    assert(did_work);
    return 0;
}
