/* Correct: a mutex written by hand on a futex word (0 free, 1 held, 2 held with waiters),
 * as in Drepper's "Futexes Are Tricky"; three threads increment a counter under it. */
#include <assert.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <sys/syscall.h>
#include <unistd.h>

static atomic_int word;
static int counter;

static void lock(void) {
    int c = 0;
    if (atomic_compare_exchange_strong(&word, &c, 1))
        return;
    if (c != 2)
        c = atomic_exchange(&word, 2);
    while (c != 0) {
        syscall(SYS_futex, &word, FUTEX_WAIT_PRIVATE, 2, NULL, NULL, 0);
        c = atomic_exchange(&word, 2);
    }
}

static void unlock(void) {
    if (atomic_fetch_sub(&word, 1) != 1) {
        atomic_store(&word, 0);
        syscall(SYS_futex, &word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
    }
}

static void *worker(void *arg) {
    (void)arg;
    for (int i = 0; i < 3; i++) {
        lock();
        int v = counter;
        sched_yield();
        counter = v + 1;
        unlock();
    }
    return NULL;
}

int main(void) {
    pthread_t t[3];
    for (int i = 0; i < 3; i++)
        pthread_create(&t[i], NULL, worker, NULL);
    for (int i = 0; i < 3; i++)
        pthread_join(t[i], NULL);
    assert(counter == 9);
    return 0;
}
