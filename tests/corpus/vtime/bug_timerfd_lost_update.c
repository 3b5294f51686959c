/* Bug: a timer thread and main both add to a counter in a read, a yield, then a write,
 * without a lock, once their wait ends: the timer thread waits for a 5 ms timerfd, main
 * sleeps 5 ms. Both wake at the same moment, so the two can interleave and lose an update
 * (rare natively; with the timerfd in virtual time the orders are scheduling choices). */
#include <assert.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

static int counter;
static int tfd;

static void add(void) {
    int v = counter;
    sched_yield();
    counter = v + 1;
}

static void *ticker(void *arg) {
    (void)arg;
    uint64_t n;
    assert(read(tfd, &n, sizeof n) == sizeof n && n == 1);
    add();
    return 0;
}

int main(void) {
    tfd = timerfd_create(CLOCK_MONOTONIC, 0);
    struct itimerspec its = {{0, 0}, {0, 5000000}};
    assert(timerfd_settime(tfd, 0, &its, 0) == 0);
    pthread_t t;
    pthread_create(&t, 0, ticker, 0);
    usleep(5000);
    add();
    pthread_join(t, 0);
    assert(counter == 2);
    return 0;
}
