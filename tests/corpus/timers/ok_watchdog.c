/* Correct: a test with a watchdog, as test suites write them: alarm(5) aborts a stuck run;
 * the threads finish long before it and main cancels it. */
#include <assert.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t c = PTHREAD_COND_INITIALIZER;
static int ready;
static void on_timeout(int s) { (void)s; abort(); }

static void *producer(void *arg) {
    (void)arg;
    usleep(1000);
    pthread_mutex_lock(&m);
    ready = 1;
    pthread_cond_broadcast(&c);
    pthread_mutex_unlock(&m);
    return 0;
}

int main(void) {
    signal(SIGALRM, on_timeout);
    alarm(5);
    pthread_t t;
    pthread_create(&t, 0, producer, 0);
    pthread_mutex_lock(&m);
    while (!ready) pthread_cond_wait(&c, &m);
    pthread_mutex_unlock(&m);
    pthread_join(t, 0);
    unsigned left = alarm(0);
    assert(left >= 4 && left <= 5);
    return 0;
}
