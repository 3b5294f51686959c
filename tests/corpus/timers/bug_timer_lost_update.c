/* Buggy: a timer's notification thread and a worker both add to a total in two locked steps
 * (read, then write): they expire at the same time and their steps may interleave. */
#include <assert.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static sem_t done;
static int total;

static void add_one(void) {
    pthread_mutex_lock(&m);
    int t = total;
    pthread_mutex_unlock(&m);
    pthread_mutex_lock(&m);
    total = t + 1;
    pthread_mutex_unlock(&m);
}

static void notify(union sigval v) {
    (void)v;
    add_one();
    sem_post(&done);
}

static void *worker(void *arg) {
    (void)arg;
    usleep(10000);
    add_one();
    return 0;
}

int main(void) {
    sem_init(&done, 0, 0);
    struct sigevent ev;
    memset(&ev, 0, sizeof ev);
    ev.sigev_notify = SIGEV_THREAD;
    ev.sigev_notify_function = notify;
    timer_t tm;
    timer_create(CLOCK_MONOTONIC, &ev, &tm);
    struct itimerspec its = {{0, 0}, {0, 10000000}};
    timer_settime(tm, 0, &its, 0);
    pthread_t t;
    pthread_create(&t, 0, worker, 0);
    sem_wait(&done);
    pthread_join(t, 0);
    assert(total == 2);
    timer_delete(tm);
    return 0;
}
