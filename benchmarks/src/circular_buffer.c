/*
 * circular_buffer.c -- SCTBench circular_buffer_bad (Inspect benchmark).
 *
 * Pattern: a producer and a consumer exchange N values through a circular
 *   buffer, handing over with send/receive flags, each step in its own
 *   critical section. Both loop exactly N times; an iteration in which the
 *   flag is not set does nothing.
 * Bug: the consumer assumes the value it removes in iteration i is i, but
 *   skipped iterations (consumer polled before the producer produced, or
 *   producer polled before the consumer consumed) desynchronise the loop
 *   counters. Reachable with pthread-call points only.
 * Expected: assertion failure in the consumer in the bad interleaving.
 */
#undef NDEBUG
#include <assert.h>
#include <pthread.h>
#include <stddef.h>

#define BUFFER_MAX 4
#define N 4

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static int buffer[BUFFER_MAX];
static unsigned first;
static unsigned next;
static int send = 1;
static int receive;

static void insert_elem(int v)
{
    buffer[next] = v;
    next = (next + 1) % BUFFER_MAX;
}

static int remove_elem(void)
{
    int v = buffer[first];
    first = (first + 1) % BUFFER_MAX;
    return v;
}

static void *producer(void *arg)
{
    (void)arg;
    for (int i = 0; i < N; i++) {
        pthread_mutex_lock(&m);
        if (send) {
            insert_elem(i);
            send = 0;
            receive = 1;
        }
        pthread_mutex_unlock(&m);
    }
    return NULL;
}

static void *consumer(void *arg)
{
    (void)arg;
    for (int i = 0; i < N; i++) {
        pthread_mutex_lock(&m);
        if (receive) {
            int v = remove_elem();
            assert(v == i); /* BUG: loop index is not the sequence number */
            receive = 0;
            send = 1;
        }
        pthread_mutex_unlock(&m);
    }
    return NULL;
}

int main(void)
{
    pthread_t p, c;
    pthread_create(&p, NULL, producer, NULL);
    pthread_create(&c, NULL, consumer, NULL);
    pthread_join(p, NULL);
    pthread_join(c, NULL);
    return 0;
}
