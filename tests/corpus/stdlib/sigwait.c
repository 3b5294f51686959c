/*
 * sigwait.c -- a signal blocked in every thread and taken by sigwait().
 *
 * Pattern: main blocks SIGUSR1 (its threads inherit the mask), starts a thread that
 *   sigwait()s for it, and sends it to the process with kill(). Correct: the signal stays
 *   pending until the sigwait takes it. A harness thread that does not block it would
 *   receive it instead, and its default action would end the process.
 */
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

static sigset_t set;

static void *waiter(void *arg)
{
    (void)arg;
    int sig = 0;
    sigwait(&set, &sig);
    return (void *)(long)sig;
}

int main(void)
{
    sigemptyset(&set);
    sigaddset(&set, SIGUSR1);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    pthread_t t;
    void *got;
    pthread_create(&t, NULL, waiter, NULL);
    kill(getpid(), SIGUSR1);
    pthread_join(t, &got);
    return got == (void *)(long)SIGUSR1 ? 0 : 1;
}
