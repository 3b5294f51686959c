/* Correct: a worker blocks in read() on a pipe until main sends it a job; a watchdog thread
 * gives up after 30 s. The job takes microseconds, so the watchdog never fires. While the
 * worker is blocked in read (outside poscheck's control) virtual time must pass in real
 * ticks, not jump to the watchdog's deadline before the woken worker is back. */
#include <assert.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <unistd.h>

static int job[2];
static atomic_int done;

static void *worker(void *arg) {
    (void)arg;
    char c;
    if (read(job[0], &c, 1) == 1 && c == 'j')
        atomic_store(&done, 1);
    return NULL;
}

static void *watchdog(void *arg) {
    (void)arg;
    sleep(30);
    assert(atomic_load(&done) && "watchdog: the job was not done in 30 s");
    return NULL;
}

int main(void) {
    if (pipe(job) != 0)
        return 2;
    pthread_t w, d;
    pthread_create(&d, NULL, watchdog, NULL);
    pthread_create(&w, NULL, worker, NULL);
    usleep(1000);
    if (write(job[1], "j", 1) != 1)
        return 2;
    pthread_join(w, NULL);
    assert(atomic_load(&done));
    puts("job done");
    return 0; /* ends the watchdog */
}
