/* Correct: a worker's pthread_once init routine may be cancelled half-way (main cancels the
 * worker at once). POSIX: a cancelled init leaves the once control as if pthread_once had
 * never been called, so main's own pthread_once after the join runs the init again if it
 * did not finish, and the table is always complete. (bug_once_cancel_assumed.c skips
 * main's call.) */
#include <assert.h>
#include <pthread.h>

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int table[2], initialised, runs;

static void init(void) {
    runs++;
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
    pthread_once(&once, init);
    assert(initialised && table[0] && table[1]);
    assert(runs >= 1 && runs <= 2);
    return 0;
}
