/* Bug: main waits for a semaphore that the SIGCHLD handler should post, but the handler
 * only counts the child (the post was forgotten): main blocks for ever once the child is
 * gone. A deadlock, still found when the model waits for signals from outside the run. */
#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

static sem_t done;
static volatile sig_atomic_t reaped;

static void on_child(int sig) {
    (void)sig;
    reaped++;
}

int main(void) {
    sem_init(&done, 0, 0);
    struct sigaction sa = {0};
    sa.sa_handler = on_child;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGCHLD, &sa, 0);
    pid_t c = fork();
    if (c == 0) {
        usleep(1000);
        _exit(0);
    }
    while (sem_wait(&done) != 0)
        assert(errno == EINTR);
    waitpid(c, 0, 0);
    return 0;
}
