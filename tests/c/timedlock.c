/* pthread_mutex_timedlock with a 1 s deadline behind a short critical section: in virtual
 * time it always gets the lock (exit 0); with `--timeouts any` it may also time out (exit 4)
 * while the holder has it. Both must be seen there, nothing else. */
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
