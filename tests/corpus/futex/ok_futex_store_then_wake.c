/* Correct: the setter stores the flag, then wakes the futex. A waiter that read 0 before the
 * store either compares the word after it (FUTEX_WAIT returns EAGAIN) or sleeps before the
 * wake and is woken. Never a bug. (bug_futex_wake_before_store.c has the two swapped.) */
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
    atomic_store(&flag, 1);
    syscall(SYS_futex, &flag, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
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
