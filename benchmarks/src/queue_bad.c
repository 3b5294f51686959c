/*
 * queue_bad.c -- queue whose emptiness test is done outside the lock.
 *
 * Pattern: one producer enqueues 2 items (each under the queue mutex). Two
 *   consumers each want one item: they poll `count > 0` WITHOUT holding the
 *   mutex (yielding while empty), then lock and dequeue.
 * Bug: check-then-act: both consumers can see count == 1, then the second
 *   one to get the lock dequeues from an empty queue. The window spans the
 *   pthread_mutex_lock call, so pthread-call points suffice.
 * Expected: assertion failure (dequeue on empty queue) in the bad
 *   interleaving.
 */
#undef NDEBUG
#include <assert.h>
#include <pthread.h>
#include <sched.h>
#include <stddef.h>

#define CAP 4

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static int q[CAP];
static int head;
static int tail;
static volatile int count;
static int got[2];

static void enqueue(int v)
{
    assert(count < CAP);
    q[tail] = v;
    tail = (tail + 1) % CAP;
    count++;
}

static int dequeue(void)
{
    assert(count > 0 && "dequeue on empty queue");
    int v = q[head];
    head = (head + 1) % CAP;
    count--;
    return v;
}

static void *producer(void *arg)
{
    (void)arg;
    for (int i = 1; i <= 2; i++) {
        pthread_mutex_lock(&m);
        enqueue(i);
        pthread_mutex_unlock(&m);
    }
    return NULL;
}

static void *consumer(void *arg)
{
    int id = (int)(long)arg;
    for (;;) {
        if (count > 0) { /* BUG: emptiness checked without the lock */
            pthread_mutex_lock(&m);
            got[id] = dequeue();
            pthread_mutex_unlock(&m);
            return NULL;
        }
        sched_yield();
    }
}

int main(void)
{
    pthread_t p, c0, c1;
    pthread_create(&c0, NULL, consumer, (void *)0L);
    pthread_create(&c1, NULL, consumer, (void *)1L);
    pthread_create(&p, NULL, producer, NULL);
    pthread_join(p, NULL);
    pthread_join(c0, NULL);
    pthread_join(c1, NULL);
    assert(got[0] + got[1] == 3);
    return 0;
}
