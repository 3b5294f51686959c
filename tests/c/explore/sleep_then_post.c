/* sleep_then_post: a semaphore with one unit and two takers, a and b (b first takes a lock),
 * and a third thread that sleeps, then posts the second unit. Whichever of a and b waits
 * first gets the initial unit; the other gets the sleeper's: 2 traces, and main asserts
 * that a was first (the bug is the trace where b is). In the first run b's wait comes after
 * the sleep; the reversal must not put the sleep before b's wait (time cannot pass while a
 * thread can go on). Explore with `--points sync`. */
#include <assert.h>
#include <pthread.h>
#include <semaphore.h>
#include <unistd.h>

static sem_t s;
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static int first, x;

static void *a(void *arg) {
    sem_wait(&s);
    if (!first) first = 1;
    return arg;
}

static void *b(void *arg) {
    pthread_mutex_lock(&m);
    x++;
    pthread_mutex_unlock(&m);
    sem_wait(&s);
    if (!first) first = 2;
    return arg;
}

static void *sleeper(void *arg) {
    usleep(1000);
    sem_post(&s);
    return arg;
}

int main(void) {
    sem_init(&s, 0, 1);
    pthread_t t1, t2, t3;
    pthread_create(&t1, NULL, a, NULL);
    pthread_create(&t2, NULL, b, NULL);
    pthread_create(&t3, NULL, sleeper, NULL);
    pthread_join(t1, NULL);
    pthread_join(t2, NULL);
    pthread_join(t3, NULL);
    assert(first == 1);
    return 0;
}
