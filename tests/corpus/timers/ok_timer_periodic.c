/* Correct: a periodic SIGEV_THREAD timer ticks a counter under a mutex and signals a condvar;
 * main waits for three ticks, reads the time left, and deletes the timer. */
#include <assert.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <time.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t c = PTHREAD_COND_INITIALIZER;
static int ticks, stopped;

static void tick(union sigval v) {
    (void)v;
    pthread_mutex_lock(&m);
    if (!stopped) ticks++;
    pthread_cond_signal(&c);
    pthread_mutex_unlock(&m);
}

int main(void) {
    struct sigevent ev;
    memset(&ev, 0, sizeof ev);
    ev.sigev_notify = SIGEV_THREAD;
    ev.sigev_notify_function = tick;
    timer_t tm;
    assert(timer_create(CLOCK_REALTIME, &ev, &tm) == 0);
    struct itimerspec its = {{0, 10000000}, {0, 10000000}};
    assert(timer_settime(tm, 0, &its, 0) == 0);
    pthread_mutex_lock(&m);
    while (ticks < 3) pthread_cond_wait(&c, &m);
    stopped = 1;
    pthread_mutex_unlock(&m);
    struct itimerspec left;
    assert(timer_gettime(tm, &left) == 0);
    assert(left.it_interval.tv_nsec == 10000000);
    assert(left.it_value.tv_sec == 0 && left.it_value.tv_nsec <= 10000000);
    assert(timer_delete(tm) == 0);
    pthread_mutex_lock(&m);
    assert(ticks >= 3);
    pthread_mutex_unlock(&m);
    return 0;
}
