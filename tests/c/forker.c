/* The program forks a child that outlives it (sleeping); the parent finishes normally: ok, and
 * the child must not survive the run. The parent waits until the child has recorded its pid
 * (a byte on a pipe), so the test always knows the child, however late it is scheduled. */
#include "common.h"
#include <pthread.h>
#include <sys/types.h>
#include <unistd.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static int counter;

static void *worker(void *arg) {
    pthread_mutex_lock(&m);
    counter++;
    pthread_mutex_unlock(&m);
    return arg;
}

int main(void) {
    record_pid();
    int ready[2];
    if (pipe(ready) != 0) return 5;
    pid_t c = fork();
    if (c == 0) {
        record_pid();
        if (write(ready[1], "r", 1) != 1) _exit(6);
        sleep(100);
        _exit(0);
    }
    char b;
    if (c < 0 || read(ready[0], &b, 1) != 1) return 7;
    pthread_t t;
    pthread_create(&t, NULL, worker, NULL);
    worker(NULL);
    pthread_join(t, NULL);
    return counter == 2 ? 0 : 1;
}
