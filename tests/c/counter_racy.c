/* Two threads do sched_yield - read - sched_yield - write on a shared counter without a
 * lock: the lost update is found when the other thread runs between the read and the write.
 * (The first yield puts a scheduling point before the read: a created thread runs nothing
 * before its start is granted, and with it every strategy, PCT of depth 1 too by its yield
 * rule, can schedule the other thread's read into the window.) */
#include <assert.h>
#include <pthread.h>
#include <sched.h>

static volatile int counter;

static void *worker(void *arg) {
    (void)arg;
    sched_yield();
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
