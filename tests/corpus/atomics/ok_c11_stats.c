/*
 * ok_c11_stats.c -- the statistics of bug_c11_stats.c kept correctly: `served` is bumped
 * with a compare-exchange loop (weak, acq_rel/relaxed, after a relaxed load), `bytes`
 * with a relaxed fetch_add, and a release/acquire flag publishes a plain result that a
 * reader may only use once it sees the flag.
 * Expected: always exits 0.
 */
#undef NDEBUG
#include <assert.h>
#include <pthread.h>
#include <stdatomic.h>

static atomic_int served;
static atomic_long bytes;
static int result;
static atomic_bool published;

static void *worker(void *arg)
{
    (void)arg;
    int n = atomic_load_explicit(&served, memory_order_relaxed);
    while (!atomic_compare_exchange_weak_explicit(&served, &n, n + 1, memory_order_acq_rel,
                                                  memory_order_relaxed))
        ;
    atomic_fetch_add_explicit(&bytes, 512, memory_order_relaxed);
    return NULL;
}

static void *publisher(void *arg)
{
    (void)arg;
    result = 42;
    atomic_store_explicit(&published, 1, memory_order_release);
    return NULL;
}

static void *reader(void *arg)
{
    (void)arg;
    if (atomic_load_explicit(&published, memory_order_acquire))
        assert(result == 42);
    return NULL;
}

int main(void)
{
    pthread_t t[4];
    pthread_create(&t[0], NULL, worker, NULL);
    pthread_create(&t[1], NULL, worker, NULL);
    pthread_create(&t[2], NULL, publisher, NULL);
    pthread_create(&t[3], NULL, reader, NULL);
    for (int i = 0; i < 4; i++)
        pthread_join(t[i], NULL);
    assert(atomic_load(&served) == 2);
    assert(atomic_load(&bytes) == 1024);
    return 0;
}
