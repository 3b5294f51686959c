/* Readers-writers with one mutex and one condition variable: 2 readers, 1 writer. Readers
 * wait while a writer writes, the last reader out signals; the writer waits while anyone is
 * inside and broadcasts when done. Synchronisation only: explore with `--points sync`. */
#include <assert.h>
#include <pthread.h>

#define READERS 2
#define WRITERS 1

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t c = PTHREAD_COND_INITIALIZER;
static int readers;
static int writing;

static void *reader(void *arg) {
    (void)arg;
    pthread_mutex_lock(&m);
    while (writing) pthread_cond_wait(&c, &m);
    readers++;
    pthread_mutex_unlock(&m);
    pthread_mutex_lock(&m);
    assert(!writing);
    if (--readers == 0) pthread_cond_signal(&c);
    pthread_mutex_unlock(&m);
    return NULL;
}

static void *writer(void *arg) {
    (void)arg;
    pthread_mutex_lock(&m);
    while (writing || readers) pthread_cond_wait(&c, &m);
    writing = 1;
    pthread_mutex_unlock(&m);
    pthread_mutex_lock(&m);
    writing = 0;
    pthread_cond_broadcast(&c);
    pthread_mutex_unlock(&m);
    return NULL;
}

int main(void) {
    pthread_t t[READERS + WRITERS];
    for (int i = 0; i < READERS; i++) pthread_create(&t[i], NULL, reader, NULL);
    for (int i = 0; i < WRITERS; i++) pthread_create(&t[READERS + i], NULL, writer, NULL);
    for (int i = 0; i < READERS + WRITERS; i++) pthread_join(t[i], NULL);
    return 0;
}
