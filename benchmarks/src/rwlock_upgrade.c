/*
 * rwlock_upgrade.c -- "upgrading" a read lock by unlock + wrlock.
 *
 * Pattern: two threads increment a counter protected by a pthread_rwlock_t.
 *   Each reads the value under the read lock, releases it, takes the write
 *   lock and stores value + 1.
 * Bug: the read value is stale once the read lock is dropped; if both
 *   threads read before either writes, one increment is lost. The window is
 *   between rwlock calls, so pthread-call points suffice.
 * Expected: assertion failure in main (value != 2) in the bad interleaving.
 */
#undef NDEBUG
#include <assert.h>
#include <pthread.h>
#include <stddef.h>

static pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
static int value;

static void *incrementer(void *arg)
{
    (void)arg;
    pthread_rwlock_rdlock(&rw);
    int v = value;
    pthread_rwlock_unlock(&rw);
    /* BUG: not an atomic upgrade; v may be stale from here on */
    pthread_rwlock_wrlock(&rw);
    value = v + 1;
    pthread_rwlock_unlock(&rw);
    return NULL;
}

int main(void)
{
    pthread_t a, b;
    pthread_create(&a, NULL, incrementer, NULL);
    pthread_create(&b, NULL, incrementer, NULL);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    assert(value == 2);
    return 0;
}
