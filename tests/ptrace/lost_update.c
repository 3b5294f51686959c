/* Lost update: two threads read a shared counter, yield, write it back plus one. Under the
 * ptrace backend the sched_yield in the window is the scheduling point that exposes it. */
#include <assert.h>
#include <pthread.h>
#include <sched.h>

static int counter;

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
