/* Correct: main arms a 10 ms ITIMER_REAL and spins on the flag its SIGALRM handler sets (no
 * sleep, no yield), while a worker counts under a mutex. Built with `poscheck cc` the spin
 * reads are scheduling points: virtual time must pass for the timer while main spins. */
#include <assert.h>
#include <pthread.h>
#include <signal.h>
#include <sys/time.h>
#include <stdio.h>
#include <unistd.h>

static volatile sig_atomic_t fired;
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static int count;

static void on_alarm(int sig) { (void)sig; fired = 1; }

static void *worker(void *arg) {
    (void)arg;
    for (int i = 0; i < 5; i++) {
        pthread_mutex_lock(&m);
        count++;
        pthread_mutex_unlock(&m);
    }
    return 0;
}

int main(void) {
    signal(SIGALRM, on_alarm);
    pthread_t w;
    pthread_create(&w, 0, worker, 0);
    struct itimerval it = {{0, 0}, {0, 10000}};
    setitimer(ITIMER_REAL, &it, 0);
    while (!fired)
        ;
    pthread_join(w, 0);
    assert(count == 5);
    puts("ok");
    return 0;
}
