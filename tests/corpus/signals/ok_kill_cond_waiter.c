/* Correct: a consumer waits on a condition variable (in a loop, as it must); a producer
 * pokes it with SIGUSR1, whose handler posts a semaphore the producer waits on before it
 * hands over the item. The condition wait resumes after the handler. */
#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t c = PTHREAD_COND_INITIALIZER;
static int item, have;
static sem_t poked;

static void on_usr1(int sig) {
    (void)sig;
    sem_post(&poked);
}

static void *consumer(void *arg) {
    (void)arg;
    pthread_mutex_lock(&m);
    while (!have)
        pthread_cond_wait(&c, &m);
    assert(item == 42);
    pthread_mutex_unlock(&m);
    return 0;
}

int main(void) {
    signal(SIGUSR1, on_usr1);
    sem_init(&poked, 0, 0);
    pthread_t t;
    pthread_create(&t, 0, consumer, 0);
    pthread_kill(t, SIGUSR1);
    while (sem_wait(&poked) == -1 && errno == EINTR)
        ;
    pthread_mutex_lock(&m);
    item = 42;
    have = 1;
    pthread_cond_signal(&c);
    pthread_mutex_unlock(&m);
    pthread_join(t, 0);
    return 0;
}
