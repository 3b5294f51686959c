/* Correct: the parent forks a child; parent and child each run two threads that count
 * under a mutex (the child's mutex is its own copy); the parent waits for the child with
 * waitpid and checks its exit status. Never a bug. */
#include <pthread.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static int counter;

static void *worker(void *arg) {
    for (int i = 0; i < 2; i++) {
        pthread_mutex_lock(&m);
        int v = counter;
        sched_yield();
        counter = v + 1;
        pthread_mutex_unlock(&m);
    }
    return arg;
}

static int two_threads(void) {
    pthread_t a, b;
    pthread_create(&a, NULL, worker, NULL);
    pthread_create(&b, NULL, worker, NULL);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    return counter;
}

int main(void) {
    pid_t c = fork();
    if (c < 0) {
        perror("fork");
        return 2;
    }
    if (c == 0)
        return two_threads() == 4 ? 0 : 1;
    int parent = two_threads();
    int st = 0;
    if (waitpid(c, &st, 0) != c || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        fprintf(stderr, "child failed (status %#x)\n", st);
        return 3;
    }
    return parent == 4 ? 0 : 1;
}
