/* Correct: a registry of live threads; each detached worker deregisters in its thread-
 * specific-data destructor and signals, and main waits until all have. Before 2026-11-27
 * the destructor ran uncontrolled after the thread's exit in the model, its signal never
 * reached the model: a deadlock in most runs. */
#include <assert.h>
#include <pthread.h>

static pthread_key_t key;
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t c = PTHREAD_COND_INITIALIZER;
static int alive, work;

static void deregister(void *p) {
    (void)p;
    pthread_mutex_lock(&m);
    alive--;
    pthread_cond_signal(&c);
    pthread_mutex_unlock(&m);
}

static void *worker(void *arg) {
    pthread_setspecific(key, arg);
    pthread_mutex_lock(&m);
    work++;
    pthread_mutex_unlock(&m);
    return NULL;
}

int main(void) {
    pthread_key_create(&key, deregister);
    pthread_attr_t at;
    pthread_attr_init(&at);
    pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
    for (int i = 0; i < 2; i++) {
        pthread_t t;
        pthread_mutex_lock(&m);
        alive++;
        pthread_mutex_unlock(&m);
        pthread_create(&t, &at, worker, (void *)1);
    }
    pthread_mutex_lock(&m);
    while (alive > 0)
        pthread_cond_wait(&c, &m);
    assert(work == 2);
    pthread_mutex_unlock(&m);
    return 0;
}
