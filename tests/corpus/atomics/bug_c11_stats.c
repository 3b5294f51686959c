/*
 * bug_c11_stats.c -- request statistics kept in C11 atomics, one of them updated with a
 * load and a store instead of a read-modify-write.
 *
 * Two workers each handle one request: they bump `served` with an acquire load and a
 * release store (bug: another worker's update between the two is lost), count bytes with a
 * relaxed fetch_add, and race to become the "first" worker with a compare-exchange
 * (acq_rel on success, acquire on failure). main checks the totals with seq_cst loads.
 * Expected: assertion failure (served == 1) when a worker runs between the other's load
 * and store.
 */
#undef NDEBUG
#include <assert.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

static atomic_int served;
static atomic_long bytes;
static atomic_intptr_t first;

static void *worker(void *arg)
{
    intptr_t id = (intptr_t)arg;
    int n = atomic_load_explicit(&served, memory_order_acquire);
    atomic_store_explicit(&served, n + 1, memory_order_release);
    atomic_fetch_add_explicit(&bytes, 512, memory_order_relaxed);
    intptr_t none = 0;
    atomic_compare_exchange_strong_explicit(&first, &none, id, memory_order_acq_rel,
                                            memory_order_acquire);
    return NULL;
}

int main(void)
{
    pthread_t a, b;
    pthread_create(&a, NULL, worker, (void *)1);
    pthread_create(&b, NULL, worker, (void *)2);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    assert(atomic_load(&first) != 0);
    assert(atomic_load(&bytes) == 1024);
    assert(atomic_load(&served) == 2);
    return 0;
}
