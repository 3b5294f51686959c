/* Lock-order inversion: one thread takes a then b, the other b then a, each yielding in
 * between. Deadlocks in the schedules where both hold their first lock. */
#include <pthread.h>
#include <sched.h>

pthread_mutex_t lock_a = PTHREAD_MUTEX_INITIALIZER;
pthread_mutex_t lock_b = PTHREAD_MUTEX_INITIALIZER;

static void *ab(void *arg) {
    (void)arg;
    pthread_mutex_lock(&lock_a);
    sched_yield();
    pthread_mutex_lock(&lock_b);
    pthread_mutex_unlock(&lock_b);
    pthread_mutex_unlock(&lock_a);
    return NULL;
}

static void *ba(void *arg) {
    (void)arg;
    pthread_mutex_lock(&lock_b);
    sched_yield();
    pthread_mutex_lock(&lock_a);
    pthread_mutex_unlock(&lock_a);
    pthread_mutex_unlock(&lock_b);
    return NULL;
}

int main(void) {
    pthread_t x, y;
    pthread_create(&x, NULL, ab, NULL);
    pthread_create(&y, NULL, ba, NULL);
    pthread_join(x, NULL);
    pthread_join(y, NULL);
    return 0;
}
