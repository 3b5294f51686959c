/* Buggy: main gives a reader thread 20 ms to deliver, then assumes it did. The reader is
 * blocked in read() on a pipe (outside poscheck's control) that main writes only later.
 * Trigger: the timed wait times out (it always does): the assertion fails. Before
 * 2026-11-28 the timeout never came while the reader was outside: a `hang`, not the bug. */
#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t got = PTHREAD_COND_INITIALIZER;
static int delivered, p[2];

static void *reader(void *arg) {
    (void)arg;
    char c;
    if (read(p[0], &c, 1) == 1) {
        pthread_mutex_lock(&m);
        delivered = 1;
        pthread_cond_signal(&got);
        pthread_mutex_unlock(&m);
    }
    return NULL;
}

int main(void) {
    if (pipe(p) != 0)
        return 2;
    pthread_t r;
    pthread_create(&r, NULL, reader, NULL);
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    t.tv_nsec += 20 * 1000 * 1000;
    if (t.tv_nsec >= 1000000000L) {
        t.tv_sec++;
        t.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&m);
    while (!delivered && pthread_cond_timedwait(&got, &m, &t) != ETIMEDOUT)
        ;
    int ok = delivered;
    pthread_mutex_unlock(&m);
    assert(ok && "the reader delivered within 20 ms");
    assert(write(p[1], "x", 1) == 1);
    pthread_join(r, NULL);
    return 0;
}
