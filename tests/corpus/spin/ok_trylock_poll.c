/* Correct: two threads take one mutex 25 times each by polling pthread_mutex_trylock (no
 * yield). PCT once kept the poller at the top priority while the holder waited below it:
 * step limit in 7 of 50 runs. A failed trylock now counts as a spin (sched/src/spin.rs). */
#include <assert.h>
#include <pthread.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static int counter;

static void *worker(void *a) {
    (void)a;
    for (int k = 0; k < 25; k++) {
        while (pthread_mutex_trylock(&m) != 0) {
        }
        counter++;
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
    assert(counter == 50);
    return 0;
}
