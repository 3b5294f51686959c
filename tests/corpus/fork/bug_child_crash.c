/* Buggy: a forked child hands a pointer from one thread to another without waiting for
 * it to be set: the reader may see NULL and crash. The crash of the child is a bug of the
 * run, in thread p1.t0.2. */
#include <pthread.h>
#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

static int value = 42;
static int *volatile shared;
static volatile int sum;

static void *writer(void *arg) {
    sched_yield();
    shared = &value;
    return arg;
}

static void *reader(void *arg) {
    sched_yield();
    sum += *shared;
    return arg;
}

int main(void) {
    pid_t c = fork();
    if (c == 0) {
        pthread_t a, b;
        pthread_create(&a, NULL, writer, NULL);
        pthread_create(&b, NULL, reader, NULL);
        pthread_join(a, NULL);
        pthread_join(b, NULL);
        _exit(0);
    }
    int st = 0;
    waitpid(c, &st, 0);
    return 0;
}
