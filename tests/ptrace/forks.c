/* A threaded program that forks a child and waits for it. */
#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>

static void *worker(void *arg) { return arg; }

int main(void) {
    pthread_t t;
    pthread_create(&t, NULL, worker, NULL);
    pthread_join(t, NULL);
    pid_t p = fork();
    if (p == 0) {
        sleep(30);
        _exit(0);
    }
    int st;
    waitpid(p, &st, 0);
    return 0;
}
