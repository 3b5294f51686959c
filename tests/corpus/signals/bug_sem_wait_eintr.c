/* Bug: the worker takes an item after sem_wait without checking for EINTR. When main's
 * SIGUSR1 (a "report your statistics" request) reaches it while it waits, sem_wait returns
 * -1 with EINTR (POSIX: never restarted), and the worker takes from an empty queue. */
#include <assert.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>

static sem_t items;
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static int queue[4], count;
static volatile sig_atomic_t reports;

static void on_usr1(int sig) {
    (void)sig;
    reports++;
}

static void *worker(void *arg) {
    (void)arg;
    sem_wait(&items); /* no EINTR check */
    pthread_mutex_lock(&m);
    assert(count > 0);
    int it = queue[--count];
    pthread_mutex_unlock(&m);
    assert(it == 7);
    return 0;
}

int main(void) {
    struct sigaction sa = {0};
    sa.sa_handler = on_usr1;
    sigaction(SIGUSR1, &sa, 0);
    sem_init(&items, 0, 0);
    pthread_t t;
    pthread_create(&t, 0, worker, 0);
    pthread_kill(t, SIGUSR1);
    pthread_mutex_lock(&m);
    queue[count++] = 7;
    pthread_mutex_unlock(&m);
    sem_post(&items);
    pthread_join(t, 0);
    return 0;
}
