/* Correct: an epoll event loop (the shape of Boost.Asio's and sd-event's reactors) waits on
 * a timerfd for its deadline and on an eventfd a producer thread signals. The producer
 * queues 3 jobs, 2 ms apart; the loop handles jobs as they come and gives up at a 50 ms
 * absolute deadline (TFD_TIMER_ABSTIME on CLOCK_MONOTONIC), which comes long after the
 * last job: every job is handled, and the loop ends on the deadline, not before it. */
#include <assert.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static int queued, efd;

static uint64_t now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static void *producer(void *arg) {
    (void)arg;
    for (int i = 0; i < 3; i++) {
        usleep(2000);
        pthread_mutex_lock(&m);
        queued++;
        pthread_mutex_unlock(&m);
        uint64_t one = 1;
        assert(write(efd, &one, sizeof one) == sizeof one);
    }
    return 0;
}

int main(void) {
    efd = eventfd(0, EFD_CLOEXEC);
    int tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
    int ep = epoll_create1(EPOLL_CLOEXEC);
    assert(efd >= 0 && tfd >= 0 && ep >= 0);
    struct epoll_event ev = {.events = EPOLLIN, .data.fd = efd};
    assert(epoll_ctl(ep, EPOLL_CTL_ADD, efd, &ev) == 0);
    ev.data.fd = tfd;
    assert(epoll_ctl(ep, EPOLL_CTL_ADD, tfd, &ev) == 0);
    uint64_t start = now_ns(), deadline = start + 50000000u;
    struct itimerspec its = {{0, 0}, {(time_t)(deadline / 1000000000u),
                                      (long)(deadline % 1000000000u)}};
    assert(timerfd_settime(tfd, TFD_TIMER_ABSTIME, &its, 0) == 0);
    pthread_t p;
    pthread_create(&p, 0, producer, 0);
    int handled = 0, expired = 0;
    while (!expired) {
        struct epoll_event got[2];
        int n = epoll_wait(ep, got, 2, -1);
        assert(n >= 1);
        for (int i = 0; i < n; i++) {
            uint64_t v;
            if (got[i].data.fd == efd) {
                assert(read(efd, &v, sizeof v) == sizeof v);
                handled += (int)v;
            } else {
                assert(read(tfd, &v, sizeof v) == sizeof v && v == 1);
                expired = 1;
            }
        }
    }
    assert(now_ns() >= deadline);
    pthread_join(p, 0);
    pthread_mutex_lock(&m);
    assert(handled == 3 && queued == 3);
    pthread_mutex_unlock(&m);
    close(tfd);
    close(efd);
    close(ep);
    return 0;
}
