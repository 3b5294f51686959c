/* Bug: two workers add to a counter in a read, a short "sleep" (poll with no descriptor, as
 * old code does), then a write, without a lock: when both read before either writes, one
 * update is lost. poll with no descriptor is a sleep in virtual time, so the two orders are
 * scheduling choices. */
#include <assert.h>
#include <poll.h>
#include <pthread.h>

static int counter;

static void *worker(void *arg) {
    (void)arg;
    int v = counter;
    poll(0, 0, 1);
    counter = v + 1;
    return 0;
}

int main(void) {
    pthread_t a, b;
    pthread_create(&a, 0, worker, 0);
    pthread_create(&b, 0, worker, 0);
    pthread_join(a, 0);
    pthread_join(b, 0);
    assert(counter == 2);
    return 0;
}
