/* Two threads do read - sched_yield - write on a shared counter without a lock: the lost
 * update is found when the other thread runs between the read and the write. */
#include <assert.h>
#include <pthread.h>
#include <sched.h>

static volatile int counter;

static void *worker(void *arg) {
    (void)arg;
    int v = counter;
    sched_yield();
    counter = v + 1;
    return NULL;
}

int main(void) {
    pthread_t a, b;
    pthread_create(&a, NULL, worker, NULL);
    pthread_create(&b, NULL, worker, NULL);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    assert(counter == 2);
    return 0;
}
