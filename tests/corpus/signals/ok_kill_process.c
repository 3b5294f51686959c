/* Correct: workers block SIGUSR1; main does not, and waits for them in pthread_join. A
 * worker reports progress with kill(getpid(), SIGUSR1): the kernel can only give it to
 * main, whose handler posts the semaphore the other worker waits on. */
#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <unistd.h>

static sem_t progress;
static volatile sig_atomic_t reports;

static void on_usr1(int sig) {
    (void)sig;
    reports++;
    sem_post(&progress);
}

static void *reporter(void *arg) {
    (void)arg;
    kill(getpid(), SIGUSR1);
    return 0;
}

static void *waiter(void *arg) {
    (void)arg;
    while (sem_wait(&progress) == -1 && errno == EINTR)
        ;
    return 0;
}

int main(void) {
    struct sigaction sa = {0};
    sa.sa_handler = on_usr1;
    sigaction(SIGUSR1, &sa, 0);
    sem_init(&progress, 0, 0);
    sigset_t s, old;
    sigemptyset(&s);
    sigaddset(&s, SIGUSR1);
    pthread_sigmask(SIG_BLOCK, &s, &old);
    pthread_t w, r;
    pthread_create(&w, 0, waiter, 0);
    pthread_create(&r, 0, reporter, 0);
    pthread_sigmask(SIG_SETMASK, &old, 0);
    pthread_join(w, 0);
    pthread_join(r, 0);
    assert(reports == 1);
    return 0;
}
