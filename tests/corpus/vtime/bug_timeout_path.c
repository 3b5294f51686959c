/* Buggy only on its timeout path: a request waits up to 1 s for a worker's reply; on timeout
 * it "cancels" by freeing the reply slot, but the worker still writes it (use after the
 * slot was given up: the assertion catches it). The worker always replies within a short
 * critical section, so the default (timeouts at their deadline) never takes the timeout
 * path; `--timeouts any` does. */
#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <time.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t c = PTHREAD_COND_INITIALIZER;
static int replied, slot_valid = 1;

static void *worker(void *arg) {
    pthread_mutex_lock(&m);
    assert(slot_valid && "reply written to a slot given up after a timeout");
    replied = 1;
    pthread_cond_signal(&c);
    pthread_mutex_unlock(&m);
    return arg;
}

int main(void) {
    pthread_t w;
    pthread_create(&w, NULL, worker, NULL);
    pthread_mutex_lock(&m);
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += 1;
    int r = 0;
    while (!replied && r != ETIMEDOUT) r = pthread_cond_timedwait(&c, &m, &ts);
    if (!replied) slot_valid = 0; /* give up the slot: the timeout path */
    pthread_mutex_unlock(&m);
    pthread_join(w, NULL);
    return 0;
}
