/* A thread dereferences a null pointer after a yield: a crash blamed on that thread. */
#include <pthread.h>
#include <sched.h>
#include <stddef.h>

static int *volatile p;

static void *worker(void *arg) {
    (void)arg;
    sched_yield();
    *p = 1;
    return NULL;
}

int main(void) {
    pthread_t t;
    pthread_create(&t, NULL, worker, NULL);
    pthread_join(t, NULL);
    return 0;
}
