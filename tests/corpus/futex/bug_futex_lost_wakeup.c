/* Buggy: a one-shot event on a futex. The waiter checks the flag, then reads the sequence
 * word it sleeps on; if the setter runs in between, the waiter sleeps on the new value and
 * no wake ever comes (the snapshot must be taken before checking the flag). */
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <sys/syscall.h>
#include <unistd.h>

static atomic_int ready;
static atomic_int seq;

static void *waiter(void *arg) {
    (void)arg;
    while (!atomic_load(&ready)) {
        sched_yield();
        int s = atomic_load(&seq);
        syscall(SYS_futex, &seq, FUTEX_WAIT_PRIVATE, s, NULL, NULL, 0);
    }
    return NULL;
}

static void *setter(void *arg) {
    (void)arg;
    atomic_store(&ready, 1);
    atomic_fetch_add(&seq, 1);
    syscall(SYS_futex, &seq, FUTEX_WAKE_PRIVATE, 1 << 30, NULL, NULL, 0);
    return NULL;
}

int main(void) {
    pthread_t w, s;
    pthread_create(&w, NULL, waiter, NULL);
    pthread_create(&s, NULL, setter, NULL);
    pthread_join(w, NULL);
    pthread_join(s, NULL);
    return 0;
}
