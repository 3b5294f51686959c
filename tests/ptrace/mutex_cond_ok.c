/* Correct: four threads increment a counter under one mutex (yielding while holding it, so
 * the lock is contended: futex waits and wakes), then a condition variable hands a flag
 * from the last worker to main. Never a bug. */
#include <assert.h>
#include <pthread.h>
#include <sched.h>

#define N 4
#define ROUNDS 3

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t done_cv = PTHREAD_COND_INITIALIZER;
static int counter;
static int finished;

static void *worker(void *arg) {
    (void)arg;
    for (int i = 0; i < ROUNDS; i++) {
        pthread_mutex_lock(&m);
        int v = counter;
        sched_yield();
        counter = v + 1;
        pthread_mutex_unlock(&m);
    }
    pthread_mutex_lock(&m);
    finished++;
    pthread_cond_broadcast(&done_cv);
    pthread_mutex_unlock(&m);
    return NULL;
}

int main(void) {
    pthread_t t[N];
    for (int i = 0; i < N; i++)
        pthread_create(&t[i], NULL, worker, NULL);
    pthread_mutex_lock(&m);
    while (finished < N)
        pthread_cond_wait(&done_cv, &m);
    assert(counter == N * ROUNDS);
    pthread_mutex_unlock(&m);
    for (int i = 0; i < N; i++)
        pthread_join(t[i], NULL);
    return 0;
}
