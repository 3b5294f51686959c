/* Three threads meet at a barrier twice: after it every phase-1 write is visible, and exactly
 * one thread per round gets PTHREAD_BARRIER_SERIAL_THREAD. */
#include <assert.h>
#include <pthread.h>

#define T 3
static pthread_barrier_t bar;
static int phase1[T];
static int serial;
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;

static void *worker(void *arg) {
    int id = (int)(long)arg;
    phase1[id] = 1;
    for (int round = 0; round < 2; round++) {
        int r = pthread_barrier_wait(&bar);
        assert(r == 0 || r == PTHREAD_BARRIER_SERIAL_THREAD);
        if (r == PTHREAD_BARRIER_SERIAL_THREAD) {
            pthread_mutex_lock(&m);
            serial++;
            pthread_mutex_unlock(&m);
        }
        for (int i = 0; i < T; i++) assert(phase1[i] == 1);
    }
    return NULL;
}

int main(void) {
    pthread_barrier_init(&bar, NULL, T);
    pthread_t t[T];
    for (long i = 0; i < T; i++) pthread_create(&t[i], NULL, worker, (void *)i);
    for (int i = 0; i < T; i++) pthread_join(t[i], NULL);
    assert(serial == 2);
    return 0;
}
