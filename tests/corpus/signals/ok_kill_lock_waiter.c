/* Correct: a worker waits for a mutex main holds; main asks it, by a signal, to acknowledge
 * (the handler posts a semaphore) before it lets the mutex go. The handler runs while the
 * worker waits for the lock, and the lock is then waited for again (never EINTR). */
#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static sem_t ack, started;
static int shared;

static void on_usr2(int sig, siginfo_t *info, void *uc) {
    (void)uc;
    assert(sig == SIGUSR2 && info->si_signo == SIGUSR2);
    sem_post(&ack);
}

static void *worker(void *arg) {
    (void)arg;
    sem_post(&started);
    pthread_mutex_lock(&m);
    assert(shared == 1);
    shared = 2;
    pthread_mutex_unlock(&m);
    return 0;
}

int main(void) {
    struct sigaction sa = {0};
    sa.sa_sigaction = on_usr2;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGUSR2, &sa, 0);
    sem_init(&ack, 0, 0);
    sem_init(&started, 0, 0);
    pthread_mutex_lock(&m);
    pthread_t t;
    pthread_create(&t, 0, worker, 0);
    sem_wait(&started);
    pthread_kill(t, SIGUSR2);
    while (sem_wait(&ack) == -1 && errno == EINTR)
        ;
    shared = 1;
    pthread_mutex_unlock(&m);
    pthread_join(t, 0);
    assert(shared == 2);
    return 0;
}
