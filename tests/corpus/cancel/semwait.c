// Correct: two workers blocked in sem_wait; one is cancelled, the other gets the one unit
// main posts. Never a bug.
#include <assert.h>
#include <pthread.h>
#include <semaphore.h>

static sem_t s;
static int got;
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;

static void *worker(void *arg) {
    (void)arg;
    sem_wait(&s);
    pthread_mutex_lock(&m);
    got++;
    pthread_mutex_unlock(&m);
    return NULL;
}

int main(void) {
    pthread_t a, b;
    void *ra, *rb;
    sem_init(&s, 0, 0);
    pthread_create(&a, NULL, worker, NULL);
    pthread_create(&b, NULL, worker, NULL);
    pthread_cancel(a);
    pthread_join(a, &ra);
    assert(ra == PTHREAD_CANCELED);
    sem_post(&s);
    pthread_join(b, &rb);
    assert(rb == NULL && got == 1);
    return 0;
}
