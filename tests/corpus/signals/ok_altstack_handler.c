/* Correct: an SA_ONSTACK handler, sent by pthread_kill to a thread blocked in sem_wait
 * that set up an alternate signal stack, runs on that stack (sigaltstack reports
 * SS_ONSTACK). libpos ran such handlers on the thread's normal stack: the assertion failed
 * in every run. */
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static sem_t s, ready;
static volatile sig_atomic_t on_alt;

static void on_usr1(int sig) {
    (void)sig;
    stack_t cur;
    sigaltstack(NULL, &cur);
    on_alt = (cur.ss_flags & SS_ONSTACK) != 0;
    sem_post(&s);
}

static void *worker(void *a) {
    (void)a;
    stack_t ss = {.ss_sp = malloc(65536), .ss_size = 65536, .ss_flags = 0};
    sigaltstack(&ss, NULL);
    sem_post(&ready);
    while (sem_wait(&s) == -1 && errno == EINTR)
        ;
    assert(on_alt);
    return NULL;
}

int main(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_usr1;
    sa.sa_flags = SA_ONSTACK;
    sigaction(SIGUSR1, &sa, NULL);
    sem_init(&s, 0, 0);
    sem_init(&ready, 0, 0);
    pthread_t t;
    pthread_create(&t, NULL, worker, NULL);
    while (sem_wait(&ready) == -1 && errno == EINTR)
        ;
    pthread_kill(t, SIGUSR1);
    pthread_join(t, NULL);
    puts("ok");
    return 0;
}
