/* Bug: the prepare handler takes two library locks, but the child handler re-initialises
 * only the first; the second stays held in the child by its main thread (the forking
 * thread's copy), so the child's worker blocks on it and the child's main joins it: a
 * deadlock in the child (natively the child hangs and the parent with it). */
#include <pthread.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

static pthread_mutex_t a = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t b = PTHREAD_MUTEX_INITIALIZER;
static int counter;

static void prepare(void) {
    pthread_mutex_lock(&a);
    pthread_mutex_lock(&b);
}

static void parent(void) {
    pthread_mutex_unlock(&b);
    pthread_mutex_unlock(&a);
}

static void child(void) {
    pthread_mutex_init(&a, NULL); /* bug: b is not re-initialised */
}

static void *worker(void *arg) {
    pthread_mutex_lock(&a);
    pthread_mutex_lock(&b);
    counter++;
    pthread_mutex_unlock(&b);
    pthread_mutex_unlock(&a);
    return arg;
}

int main(void) {
    pthread_atfork(prepare, parent, child);
    pid_t c = fork();
    if (c == 0) {
        pthread_t u;
        pthread_create(&u, NULL, worker, NULL);
        pthread_join(u, NULL);
        _exit(0);
    }
    int st = 0;
    if (c < 0 || waitpid(c, &st, 0) != c) {
        perror("fork/waitpid");
        return 2;
    }
    return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : 1;
}
