/* Correct: main hands one item to a worker that waits on a condition variable, then waits
 * for the queue to drain by polling it under the mutex (no yield). Explored, the poller once
 * kept the turn to the step limit in the first execution and the exploration ended there
 * (probe 16); a poll repeated without any other thread's step now yields the turn. */
#include <assert.h>
#include <pthread.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t c = PTHREAD_COND_INITIALIZER;
static int queued, handled;

static void *worker(void *arg) {
    (void)arg;
    pthread_mutex_lock(&m);
    while (queued == 0)
        pthread_cond_wait(&c, &m);
    queued--;
    handled++;
    pthread_mutex_unlock(&m);
    return 0;
}

int main(void) {
    pthread_t t;
    pthread_create(&t, 0, worker, 0);
    pthread_mutex_lock(&m);
    queued++;
    pthread_mutex_unlock(&m);
    pthread_cond_signal(&c);
    for (;;) {
        pthread_mutex_lock(&m);
        int empty = queued == 0;
        pthread_mutex_unlock(&m);
        if (empty)
            break;
    }
    pthread_join(t, 0);
    assert(handled == 1);
    return 0;
}
