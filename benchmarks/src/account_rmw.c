/*
 * account_rmw.c -- lost update on an unprotected read-modify-write.
 *
 * Pattern: a deposit thread and a withdraw thread each do
 *   `balance = balance +/- amount` (a separate load and store) without a lock.
 * Bug: if both loads happen before either store, one update is lost and the
 *   final balance is wrong. Needs memory-access scheduling points.
 * Expected: assertion failure in main (balance != 120) in the bad interleaving.
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

static volatile int balance = 100;

static void *deposit(void *arg)
{
    (void)arg;
    int b = balance; /* BUG: unprotected read-modify-write */
    STRESS();
    balance = b + 50;
    return NULL;
}

static void *withdraw(void *arg)
{
    (void)arg;
    int b = balance;
    STRESS();
    balance = b - 30;
    return NULL;
}

int main(void)
{
    pthread_t d, w;
    pthread_create(&d, NULL, deposit, NULL);
    pthread_create(&w, NULL, withdraw, NULL);
    pthread_join(d, NULL);
    pthread_join(w, NULL);
    assert(balance == 120);
    return 0;
}
