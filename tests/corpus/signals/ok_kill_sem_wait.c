/* Correct: main sends SIGUSR1 to a worker blocked in sem_wait; the handler (on the worker)
 * posts the semaphore main waits on (sem_post is async-signal-safe). The worker's sem_wait
 * returns EINTR and is retried. */
#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>

static sem_t go, ack, ready;
static volatile sig_atomic_t handled;

static void on_usr1(int sig) {
    (void)sig;
    handled++;
    sem_post(&ack);
}

static void *worker(void *arg) {
    (void)arg;
    sem_post(&ready);
    while (sem_wait(&go) == -1 && errno == EINTR)
        ;
    return 0;
}

int main(void) {
    struct sigaction sa = {0};
    sa.sa_handler = on_usr1;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGUSR1, &sa, 0);
    sem_init(&go, 0, 0);
    sem_init(&ack, 0, 0);
    sem_init(&ready, 0, 0);
    pthread_t t;
    pthread_create(&t, 0, worker, 0);
    sem_wait(&ready);
    pthread_kill(t, SIGUSR1);
    while (sem_wait(&ack) == -1 && errno == EINTR)
        ;
    assert(handled == 1);
    sem_post(&go);
    pthread_join(t, 0);
    return 0;
}
