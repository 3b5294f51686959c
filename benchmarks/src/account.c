/*
 * account.c -- bank transfer with per-account locks, not held together.
 *
 * Pattern: transfer() debits the source under its lock, releases it, then
 *   credits the destination under the other lock. An auditor takes both
 *   locks (always in the order a, b) and checks the total.
 * Bug: the auditor can run between the debit and the credit and see money
 *   "in flight" (total != 150). The window is between pthread calls, so it
 *   is reachable with pthread-call scheduling points only.
 * Expected: assertion failure in the auditor in the bad interleaving.
 */
#undef NDEBUG
#include <assert.h>
#include <pthread.h>
#include <stddef.h>

static pthread_mutex_t lock_a = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t lock_b = PTHREAD_MUTEX_INITIALIZER;
static int bal_a = 100;
static int bal_b = 50;

static void *transfer_a_to_b(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&lock_a);
    bal_a -= 30;
    pthread_mutex_unlock(&lock_a);
    /* BUG: neither lock is held here; the 30 units are in flight */
    pthread_mutex_lock(&lock_b);
    bal_b += 30;
    pthread_mutex_unlock(&lock_b);
    return NULL;
}

static void *transfer_b_to_a(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&lock_b);
    bal_b -= 10;
    pthread_mutex_unlock(&lock_b);
    pthread_mutex_lock(&lock_a);
    bal_a += 10;
    pthread_mutex_unlock(&lock_a);
    return NULL;
}

static void *auditor(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&lock_a);
    pthread_mutex_lock(&lock_b);
    int total = bal_a + bal_b;
    pthread_mutex_unlock(&lock_b);
    pthread_mutex_unlock(&lock_a);
    assert(total == 150);
    return NULL;
}

int main(void)
{
    pthread_t t1, t2, t3;
    pthread_create(&t1, NULL, transfer_a_to_b, NULL);
    pthread_create(&t2, NULL, transfer_b_to_a, NULL);
    pthread_create(&t3, NULL, auditor, NULL);
    pthread_join(t1, NULL);
    pthread_join(t2, NULL);
    pthread_join(t3, NULL);
    assert(bal_a == 80 && bal_b == 70);
    return 0;
}
