/* Correct: a worker computes for a while (no scheduling point), then blocks in a read of a
 * pipe until main writes to it at the end; meanwhile main polls a condition variable with
 * pthread_cond_timedwait, three times 20 ms, for a flag nobody sets. The worker is set aside
 * while it computes (a spin-wait, as far as anyone can tell), and is asleep in `read` later:
 * only the timeouts can move main on. Before 2026-11-28 a thread set aside running was not
 * counted among those asleep outside control, so time never reached the deadlines: a `hang`
 * in every run. argv[1]: the computation in millions of rounds (default 200). */
#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static int fds[2];
static long rounds = 200;
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t c = PTHREAD_COND_INITIALIZER;
static int flag;

static void *reader(void *arg) {
    uint64_t x = (uintptr_t)arg;
    for (long i = 0; i < rounds * 1000000L; i++) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        __asm__ volatile("" : "+r"(x));
    }
    char b;
    ssize_t n = read(fds[0], &b, 1);
    assert(n == 1 && b == 'q');
    return (void *)(uintptr_t)(x & 0);
}

int main(int argc, char **argv) {
    if (argc > 1) rounds = atol(argv[1]);
    if (pipe(fds) != 0) return 2;
    pthread_t t;
    pthread_create(&t, NULL, reader, (void *)1);
    pthread_mutex_lock(&m);
    int timeouts = 0;
    for (int i = 0; i < 3 && !flag; i++) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 20 * 1000 * 1000;
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        if (pthread_cond_timedwait(&c, &m, &ts) == ETIMEDOUT) timeouts++;
    }
    pthread_mutex_unlock(&m);
    assert(timeouts == 3);
    if (write(fds[1], "q", 1) != 1) return 3;
    pthread_join(t, NULL);
    return 0;
}
