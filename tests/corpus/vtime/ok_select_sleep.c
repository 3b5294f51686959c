/* Correct: select() and poll() with no descriptor used as short sleeps in polling loops
 * (old code does this for sub-second sleeps). The main thread polls a flag the worker sets
 * between its own select/poll sleeps. Under pct3 the polling loop starved the worker: such a
 * select was no sleep in the model. */
#include <assert.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/select.h>

static atomic_int stage;

static void *worker(void *arg) {
    (void)arg;
    struct timeval tv = {0, 1000};
    select(0, 0, 0, 0, &tv);
    assert(tv.tv_sec == 0 && tv.tv_usec == 0);
    atomic_store(&stage, 1);
    poll(0, 0, 1);
    atomic_store(&stage, 2);
    return 0;
}

int main(void) {
    pthread_t t;
    pthread_create(&t, 0, worker, 0);
    int loops = 0;
    while (atomic_load(&stage) < 2) {
        struct timeval tv = {0, 200};
        select(0, 0, 0, 0, &tv);
        assert(++loops < 100000);
    }
    pthread_join(t, 0);
    return 0;
}
