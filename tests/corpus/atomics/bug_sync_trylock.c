/*
 * bug_sync_trylock.c -- legacy code on gcc's __sync builtins: a worker that finds the
 * batch lock busy skips its batch instead of waiting for it.
 *
 * Each worker tries the lock with __sync_lock_test_and_set (an acquire barrier), adds its
 * batch to the total and releases it with __sync_lock_release (a release barrier);
 * requests are counted with __sync_fetch_and_add (a full barrier). Bug: a worker that
 * finds the lock taken drops its batch.
 * Expected: assertion failure (total is 10, not 20) when one worker tries while the other
 * holds the lock. gcc passes __sync barriers as acquire/release/seq_cst with a "sync" flag
 * bit; clang-14 makes every __sync read-modify-write seq_cst.
 */
#undef NDEBUG
#include <assert.h>
#include <pthread.h>

static int busy;
static long total;
static long requests;

static void *worker(void *arg)
{
    (void)arg;
    __sync_fetch_and_add(&requests, 1);
    if (__sync_lock_test_and_set(&busy, 1) == 0) {
        long t = __atomic_load_n(&total, __ATOMIC_RELAXED);
        __atomic_store_n(&total, t + 10, __ATOMIC_RELAXED);
        __sync_lock_release(&busy);
    }
    return NULL;
}

int main(void)
{
    pthread_t a, b;
    pthread_create(&a, NULL, worker, NULL);
    pthread_create(&b, NULL, worker, NULL);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    assert(__sync_fetch_and_add(&requests, 0) == 2);
    assert(__atomic_load_n(&total, __ATOMIC_SEQ_CST) == 20);
    return 0;
}
