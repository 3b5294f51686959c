/* Correct: main forks a child that exits after 10 ms; the SIGCHLD handler posts a semaphore
 * (async-signal-safe) that main waits on, with a worker thread counting meanwhile. */
#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

static sem_t done;
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static int count;

static void on_child(int sig) { (void)sig; sem_post(&done); }

static void *worker(void *arg) {
    (void)arg;
    for (int i = 0; i < 3; i++) {
        pthread_mutex_lock(&m);
        count++;
        pthread_mutex_unlock(&m);
    }
    return 0;
}

int main(void) {
    sem_init(&done, 0, 0);
    struct sigaction sa = {0};
    sa.sa_handler = on_child;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGCHLD, &sa, 0);
    pthread_t w;
    pthread_create(&w, 0, worker, 0);
    pid_t c = fork();
    if (c == 0) {
        usleep(10000);
        _exit(0);
    }
    while (sem_wait(&done) != 0)
        assert(errno == EINTR);
    int st;
    assert(waitpid(c, &st, 0) == c && WIFEXITED(st));
    pthread_join(w, 0);
    assert(count == 3);
    puts("ok");
    return 0;
}
