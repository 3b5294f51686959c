/* Lost wakeup: the waiter tests the flag before taking the mutex, so the signal can come
 * between the test and the wait; the waiter then waits forever (a deadlock). */
#include <pthread.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t c = PTHREAD_COND_INITIALIZER;
static volatile int ready;

static void *waiter(void *x) {
    if (!ready) {
        pthread_mutex_lock(&m);
        pthread_cond_wait(&c, &m);
        pthread_mutex_unlock(&m);
    }
    return x;
}

static void *signaller(void *x) {
    pthread_mutex_lock(&m);
    ready = 1;
    pthread_cond_signal(&c);
    pthread_mutex_unlock(&m);
    return x;
}

int main(void) {
    pthread_t w, s;
    pthread_create(&w, NULL, waiter, NULL);
    pthread_create(&s, NULL, signaller, NULL);
    pthread_join(w, NULL);
    pthread_join(s, NULL);
    return 0;
}
