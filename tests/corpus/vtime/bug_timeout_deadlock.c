/* Buggy: a real lock-order deadlock (a->b vs b->a); the second lock is a 5 s timed lock and
 * the program asserts that it never times out. Only the timeout breaks the deadlock, so in
 * the deadlocking interleaving the assertion fails. */
#include <assert.h>
#include <pthread.h>
#include <time.h>

static pthread_mutex_t a = PTHREAD_MUTEX_INITIALIZER, b = PTHREAD_MUTEX_INITIALIZER;

static void take(pthread_mutex_t *x, pthread_mutex_t *y) {
    pthread_mutex_lock(x);
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += 5;
    int r = pthread_mutex_timedlock(y, &ts);
    assert(r == 0 && "5 s is plenty");
    pthread_mutex_unlock(y);
    pthread_mutex_unlock(x);
}

static void *other(void *arg) {
    take(&b, &a);
    return arg;
}

int main(void) {
    pthread_t t;
    pthread_create(&t, NULL, other, NULL);
    take(&a, &b);
    pthread_join(t, NULL);
    return 0;
}
