/* pthread_mutex_timedlock returns 0 or ETIMEDOUT depending on the schedule:
 * exit 0 when it got the lock, 4 on timeout (both must be seen, nothing else). */
#include <errno.h>
#include <pthread.h>
#include <time.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;

static void *holder(void *arg) {
    pthread_mutex_lock(&m);
    pthread_mutex_unlock(&m);
    return arg;
}

int main(void) {
    pthread_t h;
    pthread_create(&h, NULL, holder, NULL);
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += 1;
    int r = pthread_mutex_timedlock(&m, &ts);
    if (r == 0) pthread_mutex_unlock(&m);
    pthread_join(h, NULL);
    if (r == 0) return 0;
    if (r == ETIMEDOUT) return 4;
    return 9;
}
