// Asynchronous cancellation (not supported by poscheck): a worker switches to
// PTHREAD_CANCEL_ASYNCHRONOUS and computes without any cancellation point; main cancels it
// while it computes and joins it. Correct on a real system (the thread is cancelled
// wherever it is); poscheck cannot cancel a thread between scheduling points, says so once,
// and must not report the run as a bug of the program.
#include <assert.h>
#include <pthread.h>
#include <semaphore.h>

static sem_t started;
static volatile unsigned long work;

static void *worker(void *arg) {
    (void)arg;
    pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, NULL);
    sem_post(&started);
    for (;;)
        work++;
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
    return 0;
}
