/* Correct: an epoll-based loop with a 3 ms timer computed from the monotonic clock, and a
 * worker that posts to an eventfd after 1 ms. Both must be seen; epoll_wait's timeouts are
 * counted in the program's (virtual) time. */
#include <assert.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

static int efd;

static long ms_since(const struct timespec *s) {
    struct timespec n;
    clock_gettime(CLOCK_MONOTONIC, &n);
    return (n.tv_sec - s->tv_sec) * 1000L + (n.tv_nsec - s->tv_nsec) / 1000000L;
}

static void *worker(void *arg) {
    (void)arg;
    usleep(1000);
    uint64_t one = 1;
    assert(write(efd, &one, sizeof one) == sizeof one);
    return 0;
}

int main(void) {
    efd = eventfd(0, 0);
    int ep = epoll_create1(0);
    struct epoll_event ev = {.events = EPOLLIN, .data.fd = efd};
    assert(efd >= 0 && ep >= 0 && epoll_ctl(ep, EPOLL_CTL_ADD, efd, &ev) == 0);
    struct timespec start;
    clock_gettime(CLOCK_MONOTONIC, &start);
    pthread_t t;
    pthread_create(&t, 0, worker, 0);
    int events = 0, fired = 0;
    while (!fired || !events) {
        long left = 3 - ms_since(&start);
        if (left <= 0) {
            fired = 1;
            left = 1000;
        }
        struct epoll_event out;
        if (epoll_wait(ep, &out, 1, (int)left) == 1) {
            uint64_t v;
            assert(read(efd, &v, sizeof v) == sizeof v && v == 1);
            events++;
        }
    }
    pthread_join(t, 0);
    assert(events == 1);
    return 0;
}
