// A worker dies holding a robust mutex in the middle of an update; the other threads
// lock it, and whoever gets EOWNERDEAD repairs the update and calls
// pthread_mutex_consistent. Correct: every lock succeeds or recovers, the count adds up.
#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>

static pthread_mutex_t m;
static int value;  // the protected state: value counts the updates,
static int dirty;  // and an update in progress sets dirty

// Lock `m`, repairing the state if its owner died inside an update.
static void lock_repair(void) {
    int r = pthread_mutex_lock(&m);
    if (r == EOWNERDEAD) {
        assert(dirty);
        dirty = 0;  // the dead owner's update counts: finish it
        r = pthread_mutex_consistent(&m);
    }
    assert(r == 0);
    assert(!dirty);
}

static void *dier(void *arg) {
    (void)arg;
    lock_repair();
    dirty = 1;
    value++;
    return NULL;  // exits holding m, its update unfinished
}

static void *user(void *arg) {
    (void)arg;
    for (int i = 0; i < 2; i++) {
        lock_repair();
        dirty = 1;
        value++;
        dirty = 0;
        pthread_mutex_unlock(&m);
    }
    return NULL;
}

int main(void) {
    pthread_mutexattr_t a;
    pthread_mutexattr_init(&a);
    pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
    pthread_mutex_init(&m, &a);
    pthread_t t[3];
    pthread_create(&t[0], NULL, dier, NULL);
    pthread_create(&t[1], NULL, user, NULL);
    pthread_create(&t[2], NULL, user, NULL);
    for (int i = 0; i < 3; i++)
        pthread_join(t[i], NULL);
    lock_repair();
    assert(value == 5);
    pthread_mutex_unlock(&m);
    // Recovered: the mutex works as before.
    assert(pthread_mutex_trylock(&m) == 0);
    pthread_mutex_unlock(&m);
    printf("value %d\n", value);
    return 0;
}
