/* Correct: a thread waits in poll() on one end of a socketpair that another thread feeds
 * (after a few locked steps of its own); the poller then reads the message. poll() is
 * outside libpos's control. Never a bug. */
#include <assert.h>
#include <poll.h>
#include <pthread.h>
#include <sys/socket.h>
#include <unistd.h>

static int sv[2];
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static int steps;

static void *poller(void *arg) {
    struct pollfd p = {.fd = sv[0], .events = POLLIN};
    int r;
    do {
        r = poll(&p, 1, -1);
    } while (r < 0);
    char buf[8];
    ssize_t n = read(sv[0], buf, sizeof buf);
    assert(n == 5);
    pthread_mutex_lock(&m);
    assert(steps == 3);
    pthread_mutex_unlock(&m);
    return arg;
}

static void *feeder(void *arg) {
    for (int i = 0; i < 3; i++) {
        pthread_mutex_lock(&m);
        steps++;
        pthread_mutex_unlock(&m);
    }
    ssize_t n = write(sv[1], "hello", 5);
    assert(n == 5);
    return arg;
}

int main(void) {
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) return 5;
    pthread_t a, b;
    pthread_create(&a, NULL, poller, NULL);
    pthread_create(&b, NULL, feeder, NULL);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    return 0;
}
