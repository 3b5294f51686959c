/* Correct: main spin-waits on an atomic flag that a thread it created sets (a common
 * hand-off, with no scheduling point in the loop in a plain build). Under control the
 * spinning thread holds the turn, so the producer could never start: after a quarter of
 * the step timeout the spinner is set aside like a blocked thread, the producer runs, and
 * the run is `partial` — never a hang or a bug. */
#include <assert.h>
#include <pthread.h>
#include <stdatomic.h>

static atomic_int ready;
static int data;

static void *producer(void *arg) {
    data = 42;
    atomic_store_explicit(&ready, 1, memory_order_release);
    return arg;
}

int main(void) {
    pthread_t t;
    pthread_create(&t, NULL, producer, NULL);
    while (!atomic_load_explicit(&ready, memory_order_acquire)) {
    }
    assert(data == 42);
    pthread_join(t, NULL);
    return 0;
}
