/* Correct: the classic `alarm(1); pause();` wait, while a worker counts under a mutex. */
#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

static volatile sig_atomic_t rang;
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static int counter;
static void on_alarm(int s) { (void)s; rang = 1; }

static void *worker(void *arg) {
    (void)arg;
    for (int i = 0; i < 3; i++) {
        pthread_mutex_lock(&m);
        counter++;
        pthread_mutex_unlock(&m);
    }
    return 0;
}

int main(void) {
    signal(SIGALRM, on_alarm);
    pthread_t t;
    pthread_create(&t, 0, worker, 0);
    alarm(1);
    while (!rang) {
        int r = pause();
        assert(r == -1 && errno == EINTR);
    }
    pthread_join(t, 0);
    pthread_mutex_lock(&m);
    assert(counter == 3);
    pthread_mutex_unlock(&m);
    return 0;
}
