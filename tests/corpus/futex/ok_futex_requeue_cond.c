/* Correct: a condition variable built on futexes the way older glibc did: waiters sleep
 * on a sequence word; a broadcast bumps it and FUTEX_CMP_REQUEUEs one waiter awake and the
 * others onto the mutex word, so they are woken one by one as the mutex is released (a
 * thread woken from the mutex word relocks it as contended, so its unlock wakes the next).
 * A second round uses plain FUTEX_REQUEUE; a CMP_REQUEUE with the wrong value fails. */
#include <assert.h>
#include <errno.h>
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
    lock_contended();
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
    /* A compare that fails (the word is not val3) requeues nothing: EAGAIN. */
    int now = atomic_load(&cond_seq);
    assert(futex(&cond_seq, FUTEX_CMP_REQUEUE_PRIVATE, 1, INT_MAX, &mutex, now + 1) == -1);
    assert(errno == EAGAIN);
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
