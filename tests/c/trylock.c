/* pthread_mutex_trylock succeeds or returns EBUSY depending on the schedule:
 * exit 0 when it got the lock, 3 when it was busy (both must be seen, nothing else). */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;

static void *holder(void *arg) {
    pthread_mutex_lock(&m);
    pthread_mutex_unlock(&m);
    return arg;
}

int main(void) {
    pthread_t h;
    pthread_create(&h, NULL, holder, NULL);
    int r = pthread_mutex_trylock(&m);
    if (r == 0) pthread_mutex_unlock(&m);
    pthread_join(h, NULL);
    if (r == 0) return 0;
    if (r == EBUSY) return 3;
    return 9;
}
