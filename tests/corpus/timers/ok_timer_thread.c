/* Correct: a POSIX timer with SIGEV_THREAD notification posts a semaphore; main waits for it. */
#include <assert.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <string.h>
#include <time.h>

static sem_t fired;
static int value;
static void notify(union sigval v) {
    value = v.sival_int;
    sem_post(&fired);
}

int main(void) {
    sem_init(&fired, 0, 0);
    struct sigevent ev;
    memset(&ev, 0, sizeof ev);
    ev.sigev_notify = SIGEV_THREAD;
    ev.sigev_notify_function = notify;
    ev.sigev_value.sival_int = 7;
    timer_t tm;
    assert(timer_create(CLOCK_MONOTONIC, &ev, &tm) == 0);
    struct itimerspec its = {{0, 0}, {0, 20000000}};
    assert(timer_settime(tm, 0, &its, 0) == 0);
    sem_wait(&fired);
    assert(value == 7);
    assert(timer_delete(tm) == 0);
    return 0;
}
