/* Correct: the core of an event loop (GLib's main loop, libuv, libevent): wait with poll()
 * for "a message on the pipe, or the next timer", re-reading the monotonic clock after each
 * wake-up. A worker sends one message after 2 ms; a timer is due at 5 ms. Under poscheck the
 * poll timeout counted real time while the clock was virtual: the timer never came due and
 * every run hung. */
#include <assert.h>
#include <poll.h>
#include <pthread.h>
#include <time.h>
#include <unistd.h>

static int p[2];

static long ms_since(const struct timespec *s) {
    struct timespec n;
    clock_gettime(CLOCK_MONOTONIC, &n);
    return (n.tv_sec - s->tv_sec) * 1000L + (n.tv_nsec - s->tv_nsec) / 1000000L;
}

static void *worker(void *arg) {
    (void)arg;
    usleep(2000);
    char c = 'm';
    assert(write(p[1], &c, 1) == 1);
    return 0;
}

int main(void) {
    assert(pipe(p) == 0);
    struct timespec start;
    clock_gettime(CLOCK_MONOTONIC, &start);
    pthread_t t;
    pthread_create(&t, 0, worker, 0);
    int messages = 0, timer_fired = 0;
    while (!timer_fired || !messages) {
        long left = 5 - ms_since(&start);
        if (left <= 0) {
            timer_fired = 1;
            left = 1000;
        }
        struct pollfd pf = {.fd = p[0], .events = POLLIN};
        if (poll(&pf, 1, (int)left) == 1) {
            char c;
            assert(read(p[0], &c, 1) == 1 && c == 'm');
            messages++;
        }
    }
    pthread_join(t, 0);
    assert(messages == 1 && ms_since(&start) >= 5);
    return 0;
}
