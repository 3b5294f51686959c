/* Bounded buffer with two semaphores and a mutex: the consumer sees 1..N in order. */
#include <assert.h>
#include <pthread.h>
#include <semaphore.h>

#define N 6
#define SLOTS 2
static sem_t empty, full;
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static int buf[SLOTS], in, out;

static void *producer(void *x) {
    for (int i = 1; i <= N; i++) {
        sem_wait(&empty);
        pthread_mutex_lock(&m);
        buf[in] = i;
        in = (in + 1) % SLOTS;
        pthread_mutex_unlock(&m);
        sem_post(&full);
    }
    return x;
}

static void *consumer(void *x) {
    for (int i = 1; i <= N; i++) {
        sem_wait(&full);
        pthread_mutex_lock(&m);
        int v = buf[out];
        out = (out + 1) % SLOTS;
        pthread_mutex_unlock(&m);
        sem_post(&empty);
        assert(v == i);
    }
    return x;
}

int main(void) {
    sem_init(&empty, 0, SLOTS);
    sem_init(&full, 0, 0);
    pthread_t p, c;
    pthread_create(&p, NULL, producer, NULL);
    pthread_create(&c, NULL, consumer, NULL);
    pthread_join(p, NULL);
    pthread_join(c, NULL);
    return 0;
}
