/* A bounded buffer on semaphores: 2 producers and 2 consumers, 2 slots, one item each.
 * `empty` counts free slots, `full` filled ones; a mutex guards the buffer. Synchronisation
 * only: explore with `--points sync`. */
#include <assert.h>
#include <pthread.h>
#include <semaphore.h>

#define SLOTS 2
#define PRODUCERS 2
#define CONSUMERS 2

static sem_t empty, full;
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static int buffer[SLOTS];
static int count;

static void *producer(void *arg) {
    (void)arg;
    sem_wait(&empty);
    pthread_mutex_lock(&m);
    buffer[count++] = 1;
    pthread_mutex_unlock(&m);
    sem_post(&full);
    return NULL;
}

static void *consumer(void *arg) {
    (void)arg;
    sem_wait(&full);
    pthread_mutex_lock(&m);
    int item = buffer[--count];
    pthread_mutex_unlock(&m);
    sem_post(&empty);
    assert(item == 1);
    return NULL;
}

int main(void) {
    sem_init(&empty, 0, SLOTS);
    sem_init(&full, 0, 0);
    pthread_t t[PRODUCERS + CONSUMERS];
    for (int i = 0; i < PRODUCERS; i++) pthread_create(&t[i], NULL, producer, NULL);
    for (int i = 0; i < CONSUMERS; i++) pthread_create(&t[PRODUCERS + i], NULL, consumer, NULL);
    for (int i = 0; i < PRODUCERS + CONSUMERS; i++) pthread_join(t[i], NULL);
    assert(count == 0);
    return 0;
}
