/* Correct: a thread blocked in read() of a pipe (outside control) gets SIGUSR1 twice, 5 ms
 * apart; its SA_RESTART handler runs once per signal, then a byte ends the read. The model
 * once decided on while the first signal's handler was still to run, so the second kill came
 * first and the kernel merged both into one handler call (assert 49/50 under pos), or it
 * spent both kills on one handler step and the second call waited for a third (deadlock). */
#include <assert.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

static int pfd[2];
static volatile sig_atomic_t hits;

static void on_usr1(int s) {
    (void)s;
    hits++;
}

static void *reader(void *a) {
    (void)a;
    char c;
    while (read(pfd[0], &c, 1) != 1) {
    }
    return 0;
}

int main(void) {
    struct sigaction sa = {0};
    sa.sa_handler = on_usr1;
    sa.sa_flags = SA_RESTART;
    sigaction(SIGUSR1, &sa, 0);
    assert(pipe(pfd) == 0);
    pthread_t t;
    pthread_create(&t, 0, reader, 0);
    usleep(5000);
    pthread_kill(t, SIGUSR1);
    usleep(5000);
    pthread_kill(t, SIGUSR1);
    usleep(5000);
    assert(write(pfd[1], "x", 1) == 1);
    pthread_join(t, 0);
    assert(hits == 2);
    return 0;
}
