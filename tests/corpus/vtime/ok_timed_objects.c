#define _GNU_SOURCE
/* Correct: 5 s timed lock, semaphore, rwlock and join behind short critical sections.
 * In virtual time none of them may time out (the holders finish long before 5 s). */
#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <time.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
static sem_t s;
static int counter;

static struct timespec in5s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += 5;
    return ts;
}

static void *worker(void *arg) {
    for (int i = 0; i < 3; i++) {
        struct timespec ts = in5s();
        int r = pthread_mutex_timedlock(&m, &ts);
        assert(r == 0);
        counter++;
        pthread_mutex_unlock(&m);
        ts = in5s();
        r = pthread_rwlock_timedwrlock(&rw, &ts);
        assert(r == 0);
        pthread_rwlock_unlock(&rw);
    }
    sem_post(&s);
    return arg;
}

int main(void) {
    pthread_t t[2];
    sem_init(&s, 0, 0);
    for (int i = 0; i < 2; i++) pthread_create(&t[i], NULL, worker, NULL);
    for (int i = 0; i < 2; i++) {
        struct timespec ts = in5s();
        int r = sem_timedwait(&s, &ts);
        assert(r == 0);
    }
    for (int i = 0; i < 2; i++) {
        struct timespec ts = in5s();
        int r = pthread_timedjoin_np(t[i], NULL, &ts);
        assert(r == 0);
    }
    assert(counter == 6);
    return 0;
}
