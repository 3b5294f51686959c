/* Correct: the parent forks its children one after another and waits for each; a child
 * starts a thread that locks a mutex and keeps it until the child's exit ends the process
 * (exit does not wait for threads). Every child locks its own copy of the mutex, unlocked
 * when it was forked. argv[1]: children (default 300). Before 2026-11-28 the 257th child was
 * given the objects of the first, whose thread still held the mutex: a false deadlock in
 * every run (userspace-rcu's test_urcu_fork, probe 22). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t idle = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t never = PTHREAD_COND_INITIALIZER;
static pthread_barrier_t held;

static void *holder(void *arg) {
    pthread_mutex_lock(&m);
    pthread_barrier_wait(&held);
    pthread_mutex_lock(&idle);
    for (;;) pthread_cond_wait(&never, &idle);
    return arg;
}

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 300;
    for (int i = 0; i < n; i++) {
        pid_t pid = fork();
        if (pid < 0) return 2;
        if (pid == 0) {
            pthread_mutex_lock(&m);
            pthread_mutex_unlock(&m);
            pthread_barrier_init(&held, NULL, 2);
            pthread_t t;
            pthread_create(&t, NULL, holder, NULL);
            pthread_barrier_wait(&held);
            exit(0);
        }
        int st;
        if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
            fprintf(stderr, "child %d failed\n", i);
            return 1;
        }
    }
    return 0;
}
