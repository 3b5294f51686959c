/* Buggy: the setter wakes the futex, then stores the flag. A waiter that read the flag as 0
 * before the store and reaches its FUTEX_WAIT after the wake sleeps for ever (the word still
 * held 0 when it compared it): a lost wake-up, deadlock at main's join. The fix is
 * ok_futex_store_then_wake.c. */
#include <linux/futex.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

static atomic_int flag;

static void *waiter(void *arg) {
    (void)arg;
    while (atomic_load(&flag) == 0)
        syscall(SYS_futex, &flag, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0);
    return NULL;
}

static void *setter(void *arg) {
    (void)arg;
    syscall(SYS_futex, &flag, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
    atomic_store(&flag, 1);
    return NULL;
}

int main(void) {
    pthread_t w, s;
    pthread_create(&s, NULL, setter, NULL);
    pthread_create(&w, NULL, waiter, NULL);
    pthread_join(w, NULL);
    pthread_join(s, NULL);
    puts("woken");
    return 0;
}
