/* Buggy: a worker's pthread_once init routine may be cancelled half-way (main cancels the
 * worker at once), but main uses the table after the join as if the init had run. When the
 * worker finished its init before the cancel it had; otherwise the table is incomplete and
 * the assertion fails. (once_cancel_rerun.c calls pthread_once again before using it.) */
#include <assert.h>
#include <pthread.h>

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int table[2], initialised;

static void init(void) {
    table[0] = 1;
    pthread_testcancel(); /* a cancellation point inside the init */
    table[1] = 1;
    initialised = 1;
}

static void *worker(void *arg) {
    (void)arg;
    pthread_once(&once, init);
    return NULL;
}

int main(void) {
    pthread_t w;
    pthread_create(&w, NULL, worker, NULL);
    pthread_cancel(w);
    pthread_join(w, NULL);
    assert(initialised && table[0] && table[1]);
    return 0;
}
