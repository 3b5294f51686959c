/* The program forks a child that outlives it (sleeping); the parent finishes normally: ok, and
 * the child must not survive the run. */
#include "common.h"
#include <pthread.h>
#include <sys/types.h>

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
    pid_t c = fork();
    if (c == 0) {
        record_pid();
        sleep(100);
        _exit(0);
    }
    pthread_t t;
    pthread_create(&t, NULL, worker, NULL);
    worker(NULL);
    pthread_join(t, NULL);
    return counter == 2 ? 0 : 1;
}
