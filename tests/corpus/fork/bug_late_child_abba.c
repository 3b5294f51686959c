/* Buggy: the parent forks its children one after another and waits for each; every child
 * runs two threads over two mutexes, in the same order, except the last child, whose second
 * thread takes them in the opposite order: it can deadlock (ABBA). argv[1]: children
 * (default 300, so that the buggy child is past the 256th: its objects must be its own). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static pthread_mutex_t a = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t b = PTHREAD_MUTEX_INITIALIZER;
static int last;

static void *forward(void *arg) {
    pthread_mutex_lock(&a);
    pthread_mutex_lock(&b);
    pthread_mutex_unlock(&b);
    pthread_mutex_unlock(&a);
    return arg;
}

static void *other(void *arg) {
    pthread_mutex_t *first = last ? &b : &a, *second = last ? &a : &b; /* BUG when last */
    pthread_mutex_lock(first);
    pthread_mutex_lock(second);
    pthread_mutex_unlock(second);
    pthread_mutex_unlock(first);
    return arg;
}

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 300;
    for (int i = 0; i < n; i++) {
        pid_t pid = fork();
        if (pid < 0) return 2;
        if (pid == 0) {
            last = i == n - 1;
            pthread_t t1, t2;
            pthread_create(&t1, NULL, forward, NULL);
            pthread_create(&t2, NULL, other, NULL);
            pthread_join(t1, NULL);
            pthread_join(t2, NULL);
            exit(0);
        }
        int st;
        if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0) return 1;
    }
    return 0;
}
