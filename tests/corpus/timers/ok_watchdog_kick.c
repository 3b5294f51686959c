/* Correct: a watchdog that the work keeps postponing, as long-running loops do: every round
 * re-arms alarm(5); a stuck round would abort. Two workers share a counter under a mutex. */
#include <assert.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static int counter;
static void on_timeout(int s) { (void)s; abort(); }

static void *worker(void *arg) {
    (void)arg;
    for (int i = 0; i < 5; i++) {
        pthread_mutex_lock(&m);
        counter++;
        pthread_mutex_unlock(&m);
        alarm(5); /* kick the watchdog */
        usleep(100);
    }
    return 0;
}

int main(void) {
    signal(SIGALRM, on_timeout);
    alarm(5);
    pthread_t a, b;
    pthread_create(&a, 0, worker, 0);
    pthread_create(&b, 0, worker, 0);
    pthread_join(a, 0);
    pthread_join(b, 0);
    unsigned left = alarm(0);
    assert(left >= 4 && left <= 5);
    assert(counter == 10);
    return 0;
}
