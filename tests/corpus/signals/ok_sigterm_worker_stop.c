/* Correct: a worker polls a stop flag between short sleeps; main asks it to stop with
 * SIGTERM (pthread_kill), whose handler sets the flag. Under the runner the program used to
 * inherit poscheck's own mask, with SIGTERM blocked: the handler never ran and the worker
 * slept forever (step limit in every run). */
#include <assert.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

static volatile sig_atomic_t stop;

static void on_term(int sig) {
    (void)sig;
    stop = 1;
}

static void *worker(void *arg) {
    (void)arg;
    long rounds = 0;
    while (!stop) {
        usleep(500);
        rounds++;
    }
    return (void *)rounds;
}

int main(void) {
    signal(SIGTERM, on_term);
    pthread_t t;
    pthread_create(&t, 0, worker, 0);
    usleep(3000);
    pthread_kill(t, SIGTERM);
    void *rounds;
    pthread_join(t, &rounds);
    assert(stop == 1 && (long)rounds > 0);
    return 0;
}
