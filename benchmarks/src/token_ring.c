/*
 * token_ring.c -- token ring that passes the token too early.
 *
 * Pattern: NODES threads form a ring. A node waits (spinning with
 *   sched_yield) until `turn` is its id, increments the shared `total`, and
 *   passes the token to the next node. Each node does ROUNDS rounds.
 * Bug: a node reads total, passes the token (writes turn), and only then
 *   writes total + 1. The next node can read the stale total in between,
 *   losing an update. There is no pthread call in the window (the spinning
 *   successor only re-checks `turn` after its own sched_yield, by which time
 *   the old holder is past the window unless memory accesses are scheduling
 *   points), so memory-access points are needed.
 * Expected: assertion failure in main (total != NODES*ROUNDS) in the bad
 *   interleaving.
 */
#undef NDEBUG
#include <assert.h>
#include <pthread.h>
#include <sched.h>
#include <stddef.h>

#ifdef POS_STRESS /* native evidence builds only: widen the race window */
#define STRESS() sched_yield()
#else
#define STRESS() ((void)0)
#endif

#define NODES 3
#define ROUNDS 2

static volatile int turn;
static volatile int total;

static void *node(void *arg)
{
    int id = (int)(long)arg;
    for (int r = 0; r < ROUNDS; r++) {
        while (turn != id)
            sched_yield();
        int t = total;
        turn = (id + 1) % NODES; /* BUG: token passed before the update */
        STRESS();
        total = t + 1;
    }
    return NULL;
}

int main(void)
{
    pthread_t t[NODES];
    for (long i = 0; i < NODES; i++)
        pthread_create(&t[i], NULL, node, (void *)i);
    for (int i = 0; i < NODES; i++)
        pthread_join(t[i], NULL);
    assert(total == NODES * ROUNDS);
    return 0;
}
