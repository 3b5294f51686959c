/*
 * lost_wakeup.c -- condition predicate tested outside the mutex.
 *
 * Pattern: the consumer checks `ready` without holding the mutex and, if
 *   not ready, locks and waits on the condvar (no re-check under the lock).
 *   The producer sets ready and signals under the mutex.
 * Bug: if the producer sets ready and signals after the consumer's check
 *   but before its pthread_cond_wait, the signal is lost (nobody waits yet)
 *   and the consumer waits forever. Pthread-call points suffice.
 * Expected: deadlock (consumer blocked in pthread_cond_wait, main in
 *   pthread_join) in the bad interleaving, else exit 0.
 */
#undef NDEBUG
#include <assert.h>
#include <pthread.h>
#include <stddef.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int ready;
static int data;

static void *consumer(void *arg)
{
    (void)arg;
    if (!ready) {                  /* BUG: predicate checked without m */
        pthread_mutex_lock(&m);
        pthread_cond_wait(&cv, &m); /* ... and not re-checked under m */
        pthread_mutex_unlock(&m);
    }
    assert(data == 42);
    return NULL;
}

static void *producer(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&m);
    data = 42;
    ready = 1;
    pthread_cond_signal(&cv);
    pthread_mutex_unlock(&m);
    return NULL;
}

int main(void)
{
    pthread_t c, p;
    pthread_create(&c, NULL, consumer, NULL);
    pthread_create(&p, NULL, producer, NULL);
    pthread_join(c, NULL);
    pthread_join(p, NULL);
    return 0;
}
