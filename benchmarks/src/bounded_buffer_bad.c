/*
 * bounded_buffer_bad.c -- bounded buffer whose waits are guarded by `if`.
 *
 * Pattern: CAP-slot ring buffer, mutex + two condvars (not_full,
 *   not_empty). 2 producers put ITEMS items each, 2 consumers get ITEMS
 *   items each.
 * Bug: put/get use `if (cond) wait` instead of `while (cond) wait`. A
 *   woken producer (consumer) can find the buffer full (empty) again because
 *   another producer (consumer) acquired the mutex between the signal and
 *   the wakeup. Pthread-call points suffice.
 * Expected: assertion failure (overflow or underflow) in the bad
 *   interleaving.
 */
#undef NDEBUG
#include <assert.h>
#include <pthread.h>
#include <stddef.h>

#define CAP 1
#define ITEMS 2
#define NPROD 2
#define NCONS 2

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t not_full = PTHREAD_COND_INITIALIZER;
static pthread_cond_t not_empty = PTHREAD_COND_INITIALIZER;
static int buf[CAP];
static int head;
static int tail;
static int count;
static int sum;

static void put(int v)
{
    pthread_mutex_lock(&m);
    if (count == CAP) /* BUG: should be `while` */
        pthread_cond_wait(&not_full, &m);
    assert(count < CAP && "buffer overflow");
    buf[tail] = v;
    tail = (tail + 1) % CAP;
    count++;
    pthread_cond_signal(&not_empty);
    pthread_mutex_unlock(&m);
}

static int get(void)
{
    pthread_mutex_lock(&m);
    if (count == 0) /* BUG: should be `while` */
        pthread_cond_wait(&not_empty, &m);
    assert(count > 0 && "buffer underflow");
    int v = buf[head];
    head = (head + 1) % CAP;
    count--;
    pthread_cond_signal(&not_full);
    pthread_mutex_unlock(&m);
    return v;
}

static void *producer(void *arg)
{
    int id = (int)(long)arg;
    for (int i = 0; i < ITEMS; i++)
        put(id * 10 + i + 1);
    return NULL;
}

static void *consumer(void *arg)
{
    (void)arg;
    int s = 0;
    for (int i = 0; i < ITEMS; i++)
        s += get();
    pthread_mutex_lock(&m);
    sum += s;
    pthread_mutex_unlock(&m);
    return NULL;
}

int main(void)
{
    pthread_t p[NPROD], c[NCONS];
    for (long i = 0; i < NCONS; i++)
        pthread_create(&c[i], NULL, consumer, (void *)i);
    for (long i = 0; i < NPROD; i++)
        pthread_create(&p[i], NULL, producer, (void *)i);
    for (int i = 0; i < NPROD; i++)
        pthread_join(p[i], NULL);
    for (int i = 0; i < NCONS; i++)
        pthread_join(c[i], NULL);
    assert(sum == (1 + 2) + (11 + 12));
    return 0;
}
