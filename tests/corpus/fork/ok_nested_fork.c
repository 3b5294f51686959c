/* Correct: a child forks a grandchild; the grandchild runs two threads counting under a
 * mutex, the child waits for it with waitpid and passes its status on, main waits for the
 * child with wait. Never a bug. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static int n;

static void *worker(void *arg) {
    pthread_mutex_lock(&m);
    n++;
    pthread_mutex_unlock(&m);
    return arg;
}

int main(void) {
    pid_t c = fork();
    if (c == 0) {
        pid_t g = fork();
        if (g == 0) {
            pthread_t t;
            pthread_create(&t, NULL, worker, NULL);
            worker(NULL);
            pthread_join(t, NULL);
            exit(n == 2 ? 0 : 1);
        }
        int st = 0;
        if (g < 0 || waitpid(g, &st, 0) != g)
            exit(8);
        exit(WIFEXITED(st) ? WEXITSTATUS(st) : 9);
    }
    int st = 0;
    if (c < 0 || wait(&st) != c) {
        perror("fork/wait");
        return 2;
    }
    return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : 1;
}
