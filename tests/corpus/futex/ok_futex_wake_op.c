/* Correct: FUTEX_WAKE_OP, as glibc's condvars before 2.25 used it: one call wakes the
 * waiter of `other` and, atomically, sets `flag` to 1 and wakes its waiters if it was 0. */
#include <assert.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/syscall.h>
#include <unistd.h>

static atomic_int flag, other;

static void wait_while_zero(atomic_int *w) {
    while (atomic_load(w) == 0)
        syscall(SYS_futex, w, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0);
}

static void *flag_waiter(void *arg) {
    (void)arg;
    wait_while_zero(&flag);
    return NULL;
}

static void *other_waiter(void *arg) {
    (void)arg;
    wait_while_zero(&other);
    return NULL;
}

int main(void) {
    pthread_t t[3];
    pthread_create(&t[0], NULL, flag_waiter, NULL);
    pthread_create(&t[1], NULL, flag_waiter, NULL);
    pthread_create(&t[2], NULL, other_waiter, NULL);
    atomic_store(&other, 1);
    long woken = syscall(SYS_futex, &other, FUTEX_WAKE_OP_PRIVATE, 1, (void *)(long)INT_MAX,
                         &flag, FUTEX_OP(FUTEX_OP_SET, 1, FUTEX_OP_CMP_EQ, 0));
    assert(woken >= 0 && woken <= 3);
    assert(atomic_load(&flag) == 1);
    for (int i = 0; i < 3; i++)
        pthread_join(t[i], NULL);
    return 0;
}
