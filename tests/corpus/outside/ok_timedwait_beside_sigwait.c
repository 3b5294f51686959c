/* Correct (pbzip2's shape): a signal thread waits in sigwait() for the whole run, outside
 * poscheck's control; a writer polls for its work with 20 ms timed condition waits, and
 * relies on their timeouts when a wake-up came before it waited; main hands it three jobs
 * and at the end stops the signal thread with pthread_kill and joins it.
 * Before 2026-11-28 a timed wait could not time out while the signal thread was outside:
 * a `hang` whenever the timeout was the way forward (pbzip2 under pct3: 11 of 30 runs). */
#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <time.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t more = PTHREAD_COND_INITIALIZER;
static int queued, done, closing;

static void *signals(void *arg) {
    sigset_t *set = arg;
    int sig;
    sigwait(set, &sig);
    return NULL;
}

static void *writer(void *arg) {
    (void)arg;
    pthread_mutex_lock(&m);
    while (!closing || queued > 0) {
        if (queued > 0) {
            queued--;
            done++;
            continue;
        }
        struct timespec t;
        clock_gettime(CLOCK_REALTIME, &t);
        t.tv_nsec += 20 * 1000 * 1000;
        if (t.tv_nsec >= 1000000000L) {
            t.tv_sec++;
            t.tv_nsec -= 1000000000L;
        }
        int r = pthread_cond_timedwait(&more, &m, &t); /* a poll: a timeout is fine */
        assert(r == 0 || r == ETIMEDOUT);
    }
    pthread_mutex_unlock(&m);
    return NULL;
}

int main(void) {
    static sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGUSR1);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    pthread_t s, w;
    pthread_create(&s, NULL, signals, &set);
    pthread_create(&w, NULL, writer, NULL);
    for (int i = 0; i < 3; i++) {
        pthread_mutex_lock(&m);
        queued++;
        pthread_mutex_unlock(&m); /* no signal: the writer's poll finds it */
    }
    pthread_mutex_lock(&m);
    closing = 1;
    pthread_mutex_unlock(&m);
    pthread_join(w, NULL);
    assert(done == 3);
    pthread_kill(s, SIGUSR1);
    pthread_join(s, NULL);
    return 0;
}
