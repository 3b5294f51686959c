/* Determinism of thread start: right after pthread_create, main spins ~2 ms reading the
 * clock (no scheduling point: the spin is not instrumented and the raw system call is not
 * interposed), then reads a variable the child writes first thing with a plain write (not
 * a point). Built with `poscheck cc` and run with `--points mem`, main's read is a
 * scheduling point, and whether the child's write comes first must be the schedule's choice
 * alone (granting the child's start before main's read): the child stays stopped at its
 * entry until then, so the spin cannot let it run ahead. The "bug" (assert) is the child's
 * write coming first: with the same seed its count must be the same every time. */
#include <assert.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

int shared;

/* A plain write, not a scheduling point (not instrumented): the child runs it as soon as
 * it runs at all. */
__attribute__((no_sanitize_thread, noinline)) static void plain_write(void) { shared = 1; }

static void *child(void *arg) {
    plain_write();
    return arg;
}

__attribute__((no_sanitize_thread, noinline)) static void spin_2ms(void) {
    struct timespec a, b;
    syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &a);
    do {
        syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &b);
    } while ((b.tv_sec - a.tv_sec) * 1000000000L + (b.tv_nsec - a.tv_nsec) < 2000000L);
}

int main(void) {
    pthread_t t;
    pthread_create(&t, NULL, child, NULL);
    spin_2ms();
    int seen = shared;
    pthread_join(t, NULL);
    assert(seen == 0);
    return 0;
}
