/* Correct: a priority-inheritance mutex written by hand (the word holds the owner's tid;
 * contended lock and unlock go to the kernel with FUTEX_LOCK_PI / FUTEX_UNLOCK_PI). libpos
 * does not model PI futexes: they run in the kernel uncontrolled, said once, and a thread
 * blocked there is set aside as blocked outside control. Never a bug, never a hang. */
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
    int expected = 0;
    int me = (int)syscall(SYS_gettid);
    if (!atomic_compare_exchange_strong(&word, &expected, me))
        syscall(SYS_futex, &word, FUTEX_LOCK_PI_PRIVATE, 0, NULL, NULL, 0);
}

static void unlock(void) {
    int me = (int)syscall(SYS_gettid);
    if (!atomic_compare_exchange_strong(&word, &me, 0))
        syscall(SYS_futex, &word, FUTEX_UNLOCK_PI_PRIVATE, 0, NULL, NULL, 0);
}

static void *worker(void *arg) {
    (void)arg;
    for (int i = 0; i < 2; i++) {
        lock();
        int v = counter;
        sched_yield();
        counter = v + 1;
        unlock();
    }
    return NULL;
}

int main(void) {
    pthread_t t[2];
    for (int i = 0; i < 2; i++)
        pthread_create(&t[i], NULL, worker, NULL);
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    assert(counter == 4);
    return 0;
}
