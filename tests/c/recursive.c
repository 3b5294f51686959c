/* A recursive mutex taken twice by its owner while another thread contends for it. */
#include <assert.h>
#include <pthread.h>
#include <sched.h>

static pthread_mutex_t m;
static int counter;

static void add(int depth) {
    pthread_mutex_lock(&m);
    int v = counter;
    sched_yield();
    counter = v + 1;
    if (depth > 0) add(depth - 1);
    pthread_mutex_unlock(&m);
}

static void *worker(void *arg) {
    add(2);
    return arg;
}

int main(void) {
    pthread_mutexattr_t at;
    pthread_mutexattr_init(&at);
    pthread_mutexattr_settype(&at, PTHREAD_MUTEX_RECURSIVE);
    pthread_mutex_init(&m, &at);
    pthread_t a, b;
    pthread_create(&a, NULL, worker, NULL);
    pthread_create(&b, NULL, worker, NULL);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    assert(counter == 6);
    return 0;
}
