/* Bug: the producer publishes `ready` under the mutex but writes `data` after its unlock;
 * the consumer polls `ready` under the mutex (no yield) and may read `data` before it is
 * written. */
#include <assert.h>
#include <pthread.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static int ready, data;

static void *producer(void *arg) {
    (void)arg;
    pthread_mutex_lock(&m);
    ready = 1;
    pthread_mutex_unlock(&m);
    data = 42; /* bug: should be written before the publication */
    return 0;
}

int main(void) {
    pthread_t t;
    pthread_create(&t, 0, producer, 0);
    for (;;) {
        pthread_mutex_lock(&m);
        int r = ready;
        pthread_mutex_unlock(&m);
        if (r)
            break;
    }
    assert(data == 42);
    pthread_join(t, 0);
    return 0;
}
