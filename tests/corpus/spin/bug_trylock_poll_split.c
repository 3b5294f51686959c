/* Bug: each thread polls pthread_mutex_trylock for a lock, but reads the counter before
 * taking it and writes it inside: an update made between the read and the lock is lost. */
#include <assert.h>
#include <pthread.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static volatile int counter;

static void *worker(void *a) {
    (void)a;
    for (int k = 0; k < 3; k++) {
        int seen = counter;
        while (pthread_mutex_trylock(&m) != 0) {
        }
        counter = seen + 1;
        pthread_mutex_unlock(&m);
    }
    return 0;
}

int main(void) {
    pthread_t t[2];
    for (int i = 0; i < 2; i++)
        pthread_create(&t[i], 0, worker, 0);
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], 0);
    assert(counter == 6);
    return 0;
}
