/* The correct condition-variable pattern (predicate loop under the mutex): never a bug. */
#include <assert.h>
#include <pthread.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t c = PTHREAD_COND_INITIALIZER;
static int ready;

static void *waiter(void *x) {
    pthread_mutex_lock(&m);
    while (!ready) pthread_cond_wait(&c, &m);
    assert(ready == 1);
    pthread_mutex_unlock(&m);
    return x;
}

static void *signaller(void *x) {
    pthread_mutex_lock(&m);
    ready = 1;
    pthread_cond_broadcast(&c);
    pthread_mutex_unlock(&m);
    return x;
}

int main(void) {
    pthread_t w1, w2, s;
    pthread_create(&w1, NULL, waiter, NULL);
    pthread_create(&w2, NULL, waiter, NULL);
    pthread_create(&s, NULL, signaller, NULL);
    pthread_join(w1, NULL);
    pthread_join(w2, NULL);
    pthread_join(s, NULL);
    return 0;
}
