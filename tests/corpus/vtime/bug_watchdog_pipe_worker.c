/* Buggy: main sends a one-byte job but the worker waits for a two-byte one, so it stays
 * blocked in read() (outside poscheck's control) and the watchdog fires after 10 s. Time
 * must still pass while the worker never comes back: the watchdog's assertion is the bug. */
#include <assert.h>
#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>

static int job[2];
static atomic_int done;

static void *worker(void *arg) {
    (void)arg;
    char c[2];
    size_t got = 0;
    while (got < sizeof c) {
        ssize_t n = read(job[0], c + got, sizeof c - got);
        if (n <= 0)
            return NULL;
        got += (size_t)n;
    }
    atomic_store(&done, 1);
    return NULL;
}

static void *watchdog(void *arg) {
    (void)arg;
    sleep(10);
    assert(atomic_load(&done) && "watchdog: the job was not done in 10 s");
    return NULL;
}

int main(void) {
    if (pipe(job) != 0)
        return 2;
    pthread_t w, d;
    pthread_create(&w, NULL, worker, NULL);
    pthread_create(&d, NULL, watchdog, NULL);
    if (write(job[1], "j", 1) != 1) /* bug: the worker expects two bytes */
        return 2;
    pthread_join(d, NULL);
    pthread_join(w, NULL);
    return 0;
}
