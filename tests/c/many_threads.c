/* 64 threads increment a counter under a mutex. */
#include <assert.h>
#include <pthread.h>

#define T 64
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static int counter;

static void *worker(void *arg) {
    pthread_mutex_lock(&m);
    counter++;
    pthread_mutex_unlock(&m);
    return arg;
}

int main(void) {
    pthread_t t[T];
    for (int i = 0; i < T; i++) assert(pthread_create(&t[i], NULL, worker, NULL) == 0);
    for (int i = 0; i < T; i++) pthread_join(t[i], NULL);
    assert(counter == T);
    return 0;
}
