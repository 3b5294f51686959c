/* Correct: a periodic timerfd paces the main thread while a worker counts under a lock.
 * main reads the timerfd three times (10 ms period, blocking reads) and checks that at least
 * 30 ms went by on the monotonic clock, then stops the worker and checks its count.
 * Natively always true; with the kernel's timerfd in real time and the clock virtual, the
 * elapsed check failed in every controlled run. */
#include <assert.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static int count, stop;

static uint64_t now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static void *worker(void *arg) {
    (void)arg;
    for (;;) {
        pthread_mutex_lock(&m);
        int done = stop;
        if (!done)
            count++;
        pthread_mutex_unlock(&m);
        if (done)
            return 0;
        usleep(3000);
    }
}

int main(void) {
    int fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
    assert(fd >= 0);
    pthread_t w;
    pthread_create(&w, 0, worker, 0);
    struct itimerspec its = {{0, 10000000}, {0, 10000000}};
    uint64_t t0 = now_ns();
    assert(timerfd_settime(fd, 0, &its, 0) == 0);
    uint64_t ticks = 0;
    while (ticks < 3) {
        uint64_t n;
        ssize_t r = read(fd, &n, sizeof n);
        assert(r == sizeof n && n >= 1);
        ticks += n;
    }
    uint64_t took = now_ns() - t0;
    assert(took >= 30000000u);
    struct itimerspec left;
    assert(timerfd_gettime(fd, &left) == 0);
    assert(left.it_interval.tv_nsec == 10000000);
    struct itimerspec off = {{0, 0}, {0, 0}};
    assert(timerfd_settime(fd, 0, &off, 0) == 0);
    assert(timerfd_gettime(fd, &left) == 0 && left.it_value.tv_sec == 0 &&
           left.it_value.tv_nsec == 0);
    close(fd);
    pthread_mutex_lock(&m);
    stop = 1;
    pthread_mutex_unlock(&m);
    pthread_join(w, 0);
    assert(count >= 1);
    printf("ticks %llu, %llu ms\n", (unsigned long long)ticks,
           (unsigned long long)(took / 1000000));
    return 0;
}
