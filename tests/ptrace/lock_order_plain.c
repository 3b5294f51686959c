/* Lock-order inversion with nothing between the locks: no system call in the window, so
 * only the breakpoints at pthread_mutex_lock (statically linked, with symbols) expose it. */
#include <pthread.h>

pthread_mutex_t first = PTHREAD_MUTEX_INITIALIZER;
pthread_mutex_t second = PTHREAD_MUTEX_INITIALIZER;

static void *forward(void *arg) {
    pthread_mutex_lock(&first);
    pthread_mutex_lock(&second);
    pthread_mutex_unlock(&second);
    pthread_mutex_unlock(&first);
    return arg;
}

static void *backward(void *arg) {
    pthread_mutex_lock(&second);
    pthread_mutex_lock(&first);
    pthread_mutex_unlock(&first);
    pthread_mutex_unlock(&second);
    return arg;
}

int main(void) {
    pthread_t x, y;
    pthread_create(&x, NULL, forward, NULL);
    pthread_create(&y, NULL, backward, NULL);
    pthread_join(x, NULL);
    pthread_join(y, NULL);
    return 0;
}
