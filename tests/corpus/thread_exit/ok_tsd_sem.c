/* Correct: each detached worker's thread-specific-data destructor posts a semaphore that
 * main waits on. Before 2026-11-27 the post was uncontrolled (after the thread's exit in
 * the model): a deadlock in every run. */
#include <assert.h>
#include <pthread.h>
#include <semaphore.h>

static pthread_key_t key;
static sem_t gone;
static int results[2];

static void finished(void *p) {
    (void)p;
    sem_post(&gone);
}

static void *worker(void *arg) {
    int i = (int)(long)arg;
    results[i] = i + 5;
    pthread_setspecific(key, (void *)1);
    return NULL;
}

int main(void) {
    sem_init(&gone, 0, 0);
    pthread_key_create(&key, finished);
    pthread_attr_t at;
    pthread_attr_init(&at);
    pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
    for (long i = 0; i < 2; i++) {
        pthread_t t;
        pthread_create(&t, &at, worker, (void *)i);
    }
    sem_wait(&gone);
    sem_wait(&gone);
    assert(results[0] == 5 && results[1] == 6);
    return 0;
}
