/* Correct (by the real-world timing it relies on): the worker sets `data` right away; main
 * sleeps 100 ms "so that the worker is done", then reads it. A second thread waits for a
 * flag with `while (!flag) usleep(1000)`, and a third spins on sched_yield until a flag set
 * after a sleep. */
#include <assert.h>
#include <pthread.h>
#include <sched.h>
#include <unistd.h>

static volatile int data, flag, late;

static void *worker(void *arg) {
    data = 42;
    flag = 1;
    return arg;
}

static void *poller(void *arg) {
    while (!flag) usleep(1000);
    assert(data == 42);
    return arg;
}

static void *spinner(void *arg) {
    while (!late) sched_yield();
    return arg;
}

static void *setter(void *arg) {
    sleep(1);
    late = 1;
    return arg;
}

int main(void) {
    pthread_t w, p, s, l;
    pthread_create(&p, NULL, poller, NULL);
    pthread_create(&s, NULL, spinner, NULL);
    pthread_create(&l, NULL, setter, NULL);
    pthread_create(&w, NULL, worker, NULL);
    usleep(100000);
    assert(data == 42);
    pthread_join(w, NULL);
    pthread_join(p, NULL);
    pthread_join(s, NULL);
    pthread_join(l, NULL);
    return 0;
}
