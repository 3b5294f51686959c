#define _GNU_SOURCE
/* Every interposed primitive once, with checks: mutexes (normal, recursive, error-checking,
 * statically initialised), trylock, rwlocks, spinlocks, condvars, semaphores, barriers,
 * pthread_once, sleeps and yields, join and detach. Must exit 0 under every schedule. */
#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#define N 3
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t rec = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
static pthread_mutex_t chk = PTHREAD_ERRORCHECK_MUTEX_INITIALIZER_NP;
static pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static pthread_spinlock_t spin;
static pthread_barrier_t bar;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static sem_t sem;
static int counter, ready, inits, shared;

static void init_once(void) { inits++; }

static void *worker(void *arg) {
    long id = (long)arg;
    pthread_once(&once, init_once);
    pthread_mutex_lock(&m);
    counter++;
    pthread_mutex_unlock(&m);
    assert(pthread_mutex_lock(&rec) == 0);
    assert(pthread_mutex_lock(&rec) == 0);
    counter++;
    pthread_mutex_unlock(&rec);
    pthread_mutex_unlock(&rec);
    pthread_spin_lock(&spin);
    shared++;
    pthread_spin_unlock(&spin);
    pthread_rwlock_rdlock(&rw);
    (void)shared;
    pthread_rwlock_unlock(&rw);
    sched_yield();
    usleep(1000);
    pthread_barrier_wait(&bar);
    sem_post(&sem);
    if (id == 0) {
        pthread_mutex_lock(&m);
        ready = 1;
        pthread_cond_broadcast(&cv);
        pthread_mutex_unlock(&m);
    }
    return (void *)(id + 100);
}

static void *detached(void *arg) {
    (void)arg;
    sem_post(&sem);
    return NULL;
}

int main(void) {
    pthread_t t[N], d;
    pthread_spin_init(&spin, 0);
    sem_init(&sem, 0, 0);
    pthread_barrier_init(&bar, NULL, N);
    for (long i = 0; i < N; i++) pthread_create(&t[i], NULL, worker, (void *)i);
    pthread_create(&d, NULL, detached, NULL);
    pthread_detach(d);

    pthread_mutex_lock(&m);
    while (!ready) pthread_cond_wait(&cv, &m);
    pthread_mutex_unlock(&m);

    for (int i = 0; i < N; i++) sem_wait(&sem);
    int v = -1;
    sem_getvalue(&sem, &v); /* not a point; the real count mirrors the modelled one */
    assert(v == 0 || v == 1);
    sem_wait(&sem);
    assert(sem_getvalue(&sem, &v) == 0 && v == 0);
    assert(sem_trywait(&sem) == -1 && errno == EAGAIN);

    for (long i = 0; i < N; i++) {
        void *r;
        assert(pthread_join(t[i], &r) == 0);
        assert((long)r == i + 100);
    }
    assert(counter == 2 * N && shared == N && inits == 1);

    assert(pthread_mutex_lock(&chk) == 0);
    assert(pthread_mutex_lock(&chk) == EDEADLK);
    assert(pthread_mutex_unlock(&chk) == 0);
    assert(pthread_mutex_unlock(&chk) == EPERM);
    assert(pthread_mutex_trylock(&m) == 0);
    assert(pthread_mutex_trylock(&m) == EBUSY);
    pthread_mutex_unlock(&m);
    assert(pthread_rwlock_wrlock(&rw) == 0);
    assert(pthread_rwlock_tryrdlock(&rw) == EBUSY);
    pthread_rwlock_unlock(&rw);

    struct timespec ts = {0, 0};
    pthread_mutex_lock(&m);
    assert(pthread_cond_timedwait(&cv, &m, &ts) == ETIMEDOUT);
    pthread_mutex_unlock(&m);
    sleep(2); /* returns at once unless POS_REAL_SLEEP=1 */
    pthread_once(&once, init_once); /* done already: skipped */
    assert(inits == 1);
    printf("sync_all ok\n");
    return 0;
}
