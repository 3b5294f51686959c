/*
 * lockfree_ok.c -- a CAS-loop counter and a push-only Treiber stack, both
 * done right (bug-free).
 *
 * Pattern: NT threads each increment a counter ITERS times with a
 *   load + compare-exchange loop that retries on failure, and push ITERS
 *   nodes on a lock-free stack (read the head, link the node to it, CAS the
 *   head, retry on failure). Nodes are written before they are published
 *   by the CAS (release) and read after the main thread joined the workers.
 * Expected: no bug in any interleaving (exit 0): the counter is NT * ITERS
 *   and the stack holds every node exactly once.
 */
#undef NDEBUG
#include <assert.h>
#include <pthread.h>
#include <stddef.h>

#define NT 3
#define ITERS 2

struct node {
    int value;
    struct node *next;
};

static long counter;
static struct node *head;
static struct node nodes[NT][ITERS];

static void increment(void)
{
    long old = __atomic_load_n(&counter, __ATOMIC_RELAXED);
    while (!__atomic_compare_exchange_n(&counter, &old, old + 1, 1,
                                        __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
        ; /* old now holds the current value: retry with it */
}

static void push(struct node *nd)
{
    struct node *old = __atomic_load_n(&head, __ATOMIC_RELAXED);
    do {
        nd->next = old;
    } while (!__atomic_compare_exchange_n(&head, &old, nd, 1, __ATOMIC_RELEASE,
                                          __ATOMIC_RELAXED));
}

static void *worker(void *arg)
{
    int id = (int)(size_t)arg;
    for (int i = 0; i < ITERS; i++) {
        increment();
        nodes[id][i].value = id * ITERS + i;
        push(&nodes[id][i]);
    }
    return NULL;
}

int main(void)
{
    pthread_t t[NT];
    for (int i = 0; i < NT; i++)
        pthread_create(&t[i], NULL, worker, (void *)(size_t)i);
    for (int i = 0; i < NT; i++)
        pthread_join(t[i], NULL);
    assert(__atomic_load_n(&counter, __ATOMIC_SEQ_CST) == NT * ITERS);
    int seen[NT * ITERS] = {0};
    int count = 0;
    for (struct node *p = head; p; p = p->next) {
        assert(p->value >= 0 && p->value < NT * ITERS);
        assert(!seen[p->value]);
        seen[p->value] = 1;
        count++;
    }
    assert(count == NT * ITERS);
    return 0;
}
