/* Correct: an interval timer's SIGALRM handler posts a semaphore (async-signal-safe) that a
 * worker waits on; main stops the timer after the worker has seen two ticks. */
#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <sys/time.h>

static sem_t tick;
static void on_alarm(int s) { (void)s; sem_post(&tick); }

static void *worker(void *arg) {
    (void)arg;
    for (int i = 0; i < 2; i++)
        while (sem_wait(&tick) == -1) assert(errno == EINTR);
    return 0;
}

int main(void) {
    sem_init(&tick, 0, 0);
    struct sigaction sa = {0};
    sa.sa_handler = on_alarm;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGALRM, &sa, 0);
    pthread_t t;
    pthread_create(&t, 0, worker, 0);
    struct itimerval it = {{0, 50000}, {0, 50000}};
    assert(setitimer(ITIMER_REAL, &it, 0) == 0);
    pthread_join(t, 0);
    struct itimerval off = {{0, 0}, {0, 0}}, old;
    assert(setitimer(ITIMER_REAL, &off, &old) == 0);
    assert(old.it_interval.tv_usec == 50000);
    return 0;
}
