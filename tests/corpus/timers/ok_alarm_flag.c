/* Correct: a SIGALRM handler sets a flag; a worker sleeps in short steps until it sees it,
 * and main joins the worker. alarm() counts in the same time as the worker's sleeps. */
#include <assert.h>
#include <pthread.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t rang;
static void on_alarm(int s) { (void)s; rang = 1; }

static void *worker(void *arg) {
    long *rounds = arg;
    while (!rang) {
        struct timespec d = {0, 5000000};
        nanosleep(&d, 0);
        ++*rounds;
    }
    return 0;
}

int main(void) {
    struct sigaction sa = {0};
    sa.sa_handler = on_alarm;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGALRM, &sa, 0);
    long rounds = 0;
    pthread_t t;
    pthread_create(&t, 0, worker, &rounds);
    alarm(1);
    pthread_join(t, 0);
    assert(rang);
    assert(rounds >= 150); /* about 200 sleeps of 5 ms fit in the second */
    return 0;
}
