/*
 * readers_writers_bad.c -- hand-rolled readers-writer lock with a
 * check/register gap.
 *
 * Pattern: a reader waits (condvar) until no writer is active, releases the
 *   mutex, and then registers itself (readers++) in a second critical
 *   section. A writer waits until readers == 0 and no writer is active.
 * Bug: between the reader's check and its registration the writer can see
 *   readers == 0 and enter; the reader then reads while the writer writes.
 *   The gap is between pthread calls, so pthread-call points suffice.
 * Expected: assertion failure (reader inside while writer active, or
 *   writer sees readers) in the bad interleaving.
 */
#undef NDEBUG
#include <assert.h>
#include <pthread.h>
#include <stddef.h>

#define NREADERS 2

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static volatile int readers;
static volatile int writer_active;
static volatile int shared_data;

static void *reader(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&m);
    while (writer_active)
        pthread_cond_wait(&cv, &m);
    pthread_mutex_unlock(&m);
    /* BUG: check and registration are separate critical sections */
    pthread_mutex_lock(&m);
    readers++;
    pthread_mutex_unlock(&m);

    assert(!writer_active && "reader overlaps writer");
    int v = shared_data;
    assert(v == 0 || v == 2);

    pthread_mutex_lock(&m);
    readers--;
    pthread_cond_broadcast(&cv);
    pthread_mutex_unlock(&m);
    return NULL;
}

static void *writer(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&m);
    while (readers > 0 || writer_active)
        pthread_cond_wait(&cv, &m);
    writer_active = 1;
    pthread_mutex_unlock(&m);

    shared_data = 1; /* intermediate state, must never be observed */
    assert(readers == 0 && "writer overlaps reader");
    shared_data = 2;

    pthread_mutex_lock(&m);
    writer_active = 0;
    pthread_cond_broadcast(&cv);
    pthread_mutex_unlock(&m);
    return NULL;
}

int main(void)
{
    pthread_t r[NREADERS], w;
    for (int i = 0; i < NREADERS; i++)
        pthread_create(&r[i], NULL, reader, NULL);
    pthread_create(&w, NULL, writer, NULL);
    for (int i = 0; i < NREADERS; i++)
        pthread_join(r[i], NULL);
    pthread_join(w, NULL);
    assert(shared_data == 2);
    return 0;
}
