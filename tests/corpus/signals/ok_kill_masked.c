/* Correct: the worker blocks SIGUSR1 while it waits, then opens its mask; the signal main
 * sent meanwhile stays pending and the handler runs once the mask opens. main waits for
 * the handler's post. */
#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>

static sem_t go, ack, ready;
static volatile sig_atomic_t handled;

static void on_usr1(int sig) {
    (void)sig;
    handled = 1;
    sem_post(&ack);
}

static void *worker(void *arg) {
    (void)arg;
    sigset_t s;
    sigemptyset(&s);
    sigaddset(&s, SIGUSR1);
    pthread_sigmask(SIG_BLOCK, &s, 0);
    sem_post(&ready);
    while (sem_wait(&go) == -1 && errno == EINTR)
        ;
    pthread_sigmask(SIG_UNBLOCK, &s, 0);
    return 0;
}

int main(void) {
    struct sigaction sa = {0};
    sa.sa_handler = on_usr1;
    sigaction(SIGUSR1, &sa, 0);
    sem_init(&go, 0, 0);
    sem_init(&ack, 0, 0);
    sem_init(&ready, 0, 0);
    pthread_t t;
    pthread_create(&t, 0, worker, 0);
    sem_wait(&ready);
    pthread_kill(t, SIGUSR1);
    sem_post(&go);
    while (sem_wait(&ack) == -1 && errno == EINTR)
        ;
    assert(handled == 1);
    pthread_join(t, 0);
    return 0;
}
