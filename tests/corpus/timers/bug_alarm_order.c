/* Buggy: main waits for one post and assumes it was the worker's, but the alarm's handler,
 * due at the same time as the worker's sleep ends, posts the same semaphore. */
#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <unistd.h>

static sem_t s;
static volatile int worker_done;
static void on_alarm(int sig) { (void)sig; sem_post(&s); }

static void *worker(void *arg) {
    (void)arg;
    sleep(1);
    worker_done = 1;
    sem_post(&s);
    return 0;
}

int main(void) {
    sem_init(&s, 0, 0);
    struct sigaction sa = {0};
    sa.sa_handler = on_alarm;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGALRM, &sa, 0);
    pthread_t t;
    pthread_create(&t, 0, worker, 0);
    alarm(1);
    while (sem_wait(&s) == -1) assert(errno == EINTR);
    assert(worker_done);
    pthread_join(t, 0);
    return 0;
}
