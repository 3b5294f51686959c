/* A thread dereferences a null pointer after a yield: reported as a crash (SIGSEGV). */
#include <pthread.h>
#include <sched.h>
#include <stddef.h>

static int *volatile p;

static void *bad(void *arg) {
    (void)arg;
    sched_yield();
    return (void *)(long)*p;
}

int main(void) {
    pthread_t t;
    pthread_create(&t, NULL, bad, NULL);
    pthread_join(t, NULL);
    return 0;
}
