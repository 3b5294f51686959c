/* Correct: graceful shutdown on SIGINT. The handler sets a flag; raise() runs it before it
 * returns (the signal is not blocked), so the workers see the flag and stop. Under the
 * runner SIGINT used to be blocked (inherited from poscheck): raise() left it pending and
 * the assertion failed in every run. */
#include <assert.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>

static volatile sig_atomic_t quit;
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t c = PTHREAD_COND_INITIALIZER;
static int stopped;

static void on_int(int sig) {
    (void)sig;
    quit = 1;
}

static void *worker(void *arg) {
    (void)arg;
    pthread_mutex_lock(&m);
    while (!quit)
        pthread_cond_wait(&c, &m);
    stopped++;
    pthread_mutex_unlock(&m);
    return 0;
}

int main(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_int;
    sigaction(SIGINT, &sa, 0);
    pthread_t t[2];
    for (int i = 0; i < 2; i++)
        pthread_create(&t[i], 0, worker, 0);
    raise(SIGINT);
    assert(quit == 1);
    pthread_mutex_lock(&m);
    pthread_cond_broadcast(&c);
    pthread_mutex_unlock(&m);
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], 0);
    assert(stopped == 2);
    return 0;
}
