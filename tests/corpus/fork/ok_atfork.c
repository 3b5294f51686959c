/* Correct: the classic pthread_atfork protocol — the prepare handler takes the lock, the
 * parent and child handlers release it — so a fork never happens while a worker holds the
 * lock, and the child can lock it. A worker thread counts under the lock meanwhile; the
 * child runs a thread of its own that takes the lock too. Never a bug. */
#include <pthread.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static int counter;

static void prepare(void) { pthread_mutex_lock(&m); }
static void release(void) { pthread_mutex_unlock(&m); }

static void *worker(void *arg) {
    for (int i = 0; i < 3; i++) {
        pthread_mutex_lock(&m);
        counter++;
        pthread_mutex_unlock(&m);
    }
    return arg;
}

int main(void) {
    pthread_atfork(prepare, release, release);
    pthread_t t;
    pthread_create(&t, NULL, worker, NULL);
    pid_t c = fork();
    if (c == 0) {
        pthread_t u;
        pthread_create(&u, NULL, worker, NULL);
        pthread_join(u, NULL);
        _exit(counter >= 3 ? 0 : 1);
    }
    int st = 0;
    if (c < 0 || waitpid(c, &st, 0) != c) {
        perror("fork/waitpid");
        return 2;
    }
    pthread_join(t, NULL);
    return WIFEXITED(st) && WEXITSTATUS(st) == 0 && counter == 3 ? 0 : 1;
}
