/* Correct, and long: a worker takes a mutex 6,000 times (12,000 synchronisation steps, more
 * than explore's default --max-steps of 10,000). */
#include <pthread.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static long n;

static void *worker(void *arg) {
    (void)arg;
    for (int i = 0; i < 6000; i++) {
        pthread_mutex_lock(&m);
        n++;
        pthread_mutex_unlock(&m);
    }
    return 0;
}

int main(void) {
    pthread_t t;
    pthread_create(&t, 0, worker, 0);
    pthread_join(t, 0);
    return n == 6000 ? 0 : 1;
}
