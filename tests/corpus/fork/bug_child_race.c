/* Buggy: a forked child runs two threads that increment a counter without a lock (the
 * read and the write are apart); the child asserts the total. Lost updates happen only
 * in the child, so only a checker that controls the child's threads finds them. The
 * parent waits for the child with wait(). */
#include <assert.h>
#include <pthread.h>
#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile int counter;

static void *worker(void *arg) {
    int v = counter;
    sched_yield();
    counter = v + 1;
    return arg;
}

int main(void) {
    pid_t c = fork();
    if (c == 0) {
        pthread_t a, b;
        pthread_create(&a, NULL, worker, NULL);
        pthread_create(&b, NULL, worker, NULL);
        pthread_join(a, NULL);
        pthread_join(b, NULL);
        assert(counter == 2);
        return 0;
    }
    int st = 0;
    wait(&st);
    return 0;
}
