/* A racy read-modify-write with a yield in the middle: some schedules lose an update and
 * fail the assertion, others pass. */
#include <assert.h>
#include <pthread.h>
#include <sched.h>

static int x;

static void *inc(void *arg) {
    (void)arg;
    int v = x;
    sched_yield();
    x = v + 1;
    return NULL;
}

int main(void) {
    pthread_t a, b;
    pthread_create(&a, NULL, inc, NULL);
    pthread_create(&b, NULL, inc, NULL);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    assert(x == 2);
    return 0;
}
