/* Correct: timeouts of waits that stay in the kernel (sigtimedwait for a signal nobody
 * sends, semtimedop on a System V semaphore, mq_timedreceive on an empty and mq_timedsend
 * to a full POSIX message queue, recv and read on a socket with SO_RCVTIMEO) take as long
 * as they say on the program's clock, and a
 * sigtimedwait loop until a clock deadline ends. Before 2026-11-28 the kernel counted real
 * time while the clock was virtual: each showed 0 ms elapsed (an assert in every run), the
 * message queue's absolute deadline was up to a second off, and the loop never ended. */
#define _GNU_SOURCE
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <mqueue.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <sys/ipc.h>
#include <sys/sem.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#define MS 1000000L
/* Each timeout: 1 ms, which the kernel waits in real time (5 ms made a run 60 ms long). */
#define WAIT (1 * MS)

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static int work;

static long now_ns(clockid_t c) {
    struct timespec t;
    clock_gettime(c, &t);
    return t.tv_sec * 1000000000L + t.tv_nsec;
}

static struct timespec after(clockid_t c, long ns) {
    long t = now_ns(c) + ns;
    struct timespec ts = {t / 1000000000L, t % 1000000000L};
    return ts;
}

static void *waiter(void *arg) {
    (void)arg;
    struct timespec five = {0, WAIT};
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGUSR2);
    pthread_sigmask(SIG_BLOCK, &set, NULL);

    long t0 = now_ns(CLOCK_MONOTONIC);
    int r = sigtimedwait(&set, NULL, &five);
    assert(r == -1 && errno == EAGAIN);
    assert(now_ns(CLOCK_MONOTONIC) - t0 >= WAIT);

    int id = semget(IPC_PRIVATE, 1, IPC_CREAT | 0600);
    assert(id >= 0);
    struct sembuf down = {0, -1, 0};
    t0 = now_ns(CLOCK_MONOTONIC);
    r = semtimedop(id, &down, 1, &five);
    int e = errno;
    semctl(id, 0, IPC_RMID);
    assert(r == -1 && e == EAGAIN);
    assert(now_ns(CLOCK_MONOTONIC) - t0 >= WAIT);

    char name[64];
    snprintf(name, sizeof name, "/poscheck-vtime-%d", (int)getpid());
    struct mq_attr attr = {0};
    attr.mq_maxmsg = 1;
    attr.mq_msgsize = 8;
    mqd_t q = mq_open(name, O_CREAT | O_RDWR, 0600, &attr);
    assert(q != (mqd_t)-1);
    mq_unlink(name);
    char buf[8] = "x";
    t0 = now_ns(CLOCK_MONOTONIC);
    struct timespec at = after(CLOCK_REALTIME, WAIT);
    assert(mq_timedreceive(q, buf, sizeof buf, NULL, &at) == -1 && errno == ETIMEDOUT);
    assert(now_ns(CLOCK_MONOTONIC) - t0 >= WAIT);
    assert(mq_send(q, buf, 1, 0) == 0);
    t0 = now_ns(CLOCK_MONOTONIC);
    at = after(CLOCK_REALTIME, WAIT);
    assert(mq_timedsend(q, buf, 1, 0, &at) == -1 && errno == ETIMEDOUT);
    assert(now_ns(CLOCK_MONOTONIC) - t0 >= WAIT);
    mq_close(q);

    int sv[2];
    assert(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
    struct timeval tv = {0, WAIT / 1000};
    assert(setsockopt(sv[0], SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv) == 0);
    t0 = now_ns(CLOCK_MONOTONIC);
    assert(recv(sv[0], buf, 1, 0) == -1 && errno == EAGAIN);
    assert(now_ns(CLOCK_MONOTONIC) - t0 >= WAIT);
    t0 = now_ns(CLOCK_MONOTONIC);
    assert(read(sv[0], buf, 1) == -1 && errno == EAGAIN);
    assert(now_ns(CLOCK_MONOTONIC) - t0 >= WAIT);
    close(sv[0]);
    close(sv[1]);

    /* A signal thread's loop: wait WAIT at a time until a deadline of 6 × WAIT. */
    long end = now_ns(CLOCK_MONOTONIC) + 6 * WAIT;
    int rounds = 0;
    while (now_ns(CLOCK_MONOTONIC) < end) {
        sigtimedwait(&set, NULL, &five);
        assert(++rounds < 100);
    }
    return NULL;
}

static void *busy(void *arg) {
    (void)arg;
    for (int i = 0; i < 3; i++) {
        pthread_mutex_lock(&m);
        work++;
        pthread_mutex_unlock(&m);
    }
    return NULL;
}

int main(void) {
    pthread_t w, b;
    pthread_create(&w, NULL, waiter, NULL);
    pthread_create(&b, NULL, busy, NULL);
    pthread_join(w, NULL);
    pthread_join(b, NULL);
    assert(work == 3);
    puts("ok");
    return 0;
}
