/*
 * readers_writers_ok.c -- readers and writers using pthread_rwlock_t
 * (bug-free).
 *
 * Pattern: 2 readers take the read lock (concurrently with each other) and
 *   check that no writer is inside and that the data is consistent; 2
 *   writers take the write lock and update two fields that must stay equal.
 *   Occupancy counters use __atomic builtins because readers update them
 *   concurrently.
 * Expected: no bug in any interleaving (exit 0).
 */
#undef NDEBUG
#include <assert.h>
#include <pthread.h>
#include <stddef.h>

#define NREADERS 2
#define NWRITERS 2

static pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
static int readers_in;
static int writers_in;
static int x;
static int y; /* invariant: x == y outside the write lock */

static void *reader(void *arg)
{
    (void)arg;
    for (int k = 0; k < 2; k++) {
        pthread_rwlock_rdlock(&rw);
        __atomic_fetch_add(&readers_in, 1, __ATOMIC_SEQ_CST);
        assert(__atomic_load_n(&writers_in, __ATOMIC_SEQ_CST) == 0);
        int a = x;
        int b = y;
        assert(a == b);
        __atomic_fetch_sub(&readers_in, 1, __ATOMIC_SEQ_CST);
        pthread_rwlock_unlock(&rw);
    }
    return NULL;
}

static void *writer(void *arg)
{
    (void)arg;
    pthread_rwlock_wrlock(&rw);
    __atomic_fetch_add(&writers_in, 1, __ATOMIC_SEQ_CST);
    assert(__atomic_load_n(&readers_in, __ATOMIC_SEQ_CST) == 0);
    assert(__atomic_load_n(&writers_in, __ATOMIC_SEQ_CST) == 1);
    x = x + 1;
    y = y + 1;
    __atomic_fetch_sub(&writers_in, 1, __ATOMIC_SEQ_CST);
    pthread_rwlock_unlock(&rw);
    return NULL;
}

int main(void)
{
    pthread_t r[NREADERS], w[NWRITERS];
    for (int i = 0; i < NREADERS; i++)
        pthread_create(&r[i], NULL, reader, NULL);
    for (int i = 0; i < NWRITERS; i++)
        pthread_create(&w[i], NULL, writer, NULL);
    for (int i = 0; i < NREADERS; i++)
        pthread_join(r[i], NULL);
    for (int i = 0; i < NWRITERS; i++)
        pthread_join(w[i], NULL);
    assert(x == NWRITERS && y == NWRITERS);
    return 0;
}
