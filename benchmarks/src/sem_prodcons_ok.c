/*
 * sem_prodcons_ok.c -- producer/consumer with counting semaphores
 * (bug-free).
 *
 * Pattern: ring buffer of CAP slots; sem `empty` (init CAP) counts free
 *   slots, sem `full` (init 0) counts filled slots, a mutex protects the
 *   indices. NPROD producers put ITEMS items each, NCONS consumers get ITEMS
 *   items each.
 * Expected: no bug in any interleaving (exit 0).
 */
#undef NDEBUG
#include <assert.h>
#include <pthread.h>
#include <semaphore.h>
#include <stddef.h>

#define CAP 2
#define ITEMS 2
#define NPROD 2
#define NCONS 2

static sem_t empty;
static sem_t full;
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static int buf[CAP];
static int head;
static int tail;
static int count;
static int sum;

static void *producer(void *arg)
{
    int id = (int)(long)arg;
    for (int i = 0; i < ITEMS; i++) {
        sem_wait(&empty);
        pthread_mutex_lock(&m);
        assert(count < CAP);
        buf[tail] = id * 10 + i + 1;
        tail = (tail + 1) % CAP;
        count++;
        pthread_mutex_unlock(&m);
        sem_post(&full);
    }
    return NULL;
}

static void *consumer(void *arg)
{
    (void)arg;
    for (int i = 0; i < ITEMS; i++) {
        sem_wait(&full);
        pthread_mutex_lock(&m);
        assert(count > 0);
        int v = buf[head];
        head = (head + 1) % CAP;
        count--;
        sum += v;
        pthread_mutex_unlock(&m);
        sem_post(&empty);
    }
    return NULL;
}

int main(void)
{
    pthread_t p[NPROD], c[NCONS];
    sem_init(&empty, 0, CAP);
    sem_init(&full, 0, 0);
    for (long i = 0; i < NPROD; i++)
        pthread_create(&p[i], NULL, producer, (void *)i);
    for (long i = 0; i < NCONS; i++)
        pthread_create(&c[i], NULL, consumer, (void *)i);
    for (int i = 0; i < NPROD; i++)
        pthread_join(p[i], NULL);
    for (int i = 0; i < NCONS; i++)
        pthread_join(c[i], NULL);
    sem_destroy(&empty);
    sem_destroy(&full);
    assert(count == 0);
    assert(sum == (1 + 2) + (11 + 12));
    return 0;
}
