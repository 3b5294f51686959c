/* Buggy: the requeue broadcast of ok_futex_requeue_cond.c, but a woken waiter relocks the
 * mutex the uncontended way (word 1), so its unlock wakes nobody and the waiters requeued
 * onto the mutex word sleep forever: a lost wake-up (deadlock at main's join). */
#include <assert.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/syscall.h>
#include <unistd.h>

#define NWAITERS 3

static atomic_int mutex; /* 0 free, 1 held, 2 held with waiters */
static atomic_int cond_seq;
static int go[2], woke[2];

static long futex(atomic_int *w, int op, int val, long val2, atomic_int *w2, int val3) {
    return syscall(SYS_futex, w, op, val, val2, w2, val3);
}

static void lock_contended(void) {
    while (atomic_exchange(&mutex, 2) != 0)
        futex(&mutex, FUTEX_WAIT_PRIVATE, 2, 0, NULL, 0);
}

static void lock(void) {
    int c = 0;
    if (!atomic_compare_exchange_strong(&mutex, &c, 1))
        lock_contended();
}

static void unlock(void) {
    if (atomic_exchange(&mutex, 0) == 2)
        futex(&mutex, FUTEX_WAKE_PRIVATE, 1, 0, NULL, 0);
}

/* Called with the mutex held; returns with it held. */
static void cond_wait(void) {
    int seq = atomic_load(&cond_seq);
    unlock();
    futex(&cond_seq, FUTEX_WAIT_PRIVATE, seq, 0, NULL, 0);
    lock(); /* the bug: must be lock_contended() */
}

static void cond_broadcast(int cmp) {
    int seq = atomic_fetch_add(&cond_seq, 1) + 1;
    if (cmp) {
        while (futex(&cond_seq, FUTEX_CMP_REQUEUE_PRIVATE, 1, INT_MAX, &mutex, seq) < 0)
            seq = atomic_load(&cond_seq);
    } else {
        futex(&cond_seq, FUTEX_REQUEUE_PRIVATE, 1, INT_MAX, &mutex, 0);
    }
}

static void *waiter(void *arg) {
    (void)arg;
    for (int round = 0; round < 2; round++) {
        lock();
        while (!go[round])
            cond_wait();
        woke[round]++;
        unlock();
    }
    return NULL;
}

int main(void) {
    pthread_t t[NWAITERS];
    for (int i = 0; i < NWAITERS; i++)
        pthread_create(&t[i], NULL, waiter, NULL);
    for (int round = 0; round < 2; round++) {
        lock();
        go[round] = 1;
        cond_broadcast(round == 0);
        unlock();
    }
    for (int i = 0; i < NWAITERS; i++)
        pthread_join(t[i], NULL);
    assert(woke[0] == NWAITERS && woke[1] == NWAITERS);
    return 0;
}
