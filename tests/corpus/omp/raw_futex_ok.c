/* Correct: a hand-written futex lock (Drepper's three-state mutex) whose
 * futex calls are inline "syscall" instructions, as some libraries do to
 * avoid libc; three threads update a counter under it. */
#include <assert.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <sys/syscall.h>

static long raw_futex(atomic_int *addr, int op, int val)
{
    long ret;
    register long r10 __asm__("r10") = 0;
    __asm__ volatile("syscall"
                     : "=a"(ret)
                     : "0"((long)SYS_futex), "D"(addr), "S"((long)op), "d"((long)val), "r"(r10)
                     : "rcx", "r11", "memory");
    return ret;
}

static atomic_int lock_word; /* 0 free, 1 locked, 2 locked with waiters */
static int counter;

static void lock(void)
{
    int c = 0;
    if (atomic_compare_exchange_strong(&lock_word, &c, 1))
        return;
    if (c != 2)
        c = atomic_exchange(&lock_word, 2);
    while (c != 0) {
        raw_futex(&lock_word, FUTEX_WAIT_PRIVATE, 2);
        c = atomic_exchange(&lock_word, 2);
    }
}

static void unlock(void)
{
    if (atomic_fetch_sub(&lock_word, 1) != 1) {
        atomic_store(&lock_word, 0);
        raw_futex(&lock_word, FUTEX_WAKE_PRIVATE, 1);
    }
}

static void *worker(void *arg)
{
    (void)arg;
    for (int i = 0; i < 3; i++) {
        lock();
        int seen = counter;
        sched_yield();
        counter = seen + 1;
        unlock();
    }
    return NULL;
}

int main(void)
{
    pthread_t t[3];
    for (int i = 0; i < 3; i++)
        pthread_create(&t[i], NULL, worker, NULL);
    for (int i = 0; i < 3; i++)
        pthread_join(t[i], NULL);
    assert(counter == 9);
    printf("counter %d\n", counter);
    return 0;
}
