// A robust mutex made not recoverable (its owner died, the next owner unlocked it without
// pthread_mutex_consistent) is destroyed and initialised again, as POSIX says to reuse it:
// from then on it works as a new mutex, and every lock succeeds.
#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>

static pthread_mutex_t m;
static pthread_mutexattr_t attr;
static int value;

static void *dier(void *arg) {
    (void)arg;
    pthread_mutex_lock(&m);
    return NULL;  // exits holding m
}

static void *user(void *arg) {
    (void)arg;
    for (int i = 0; i < 2; i++) {
        int r = pthread_mutex_lock(&m);
        assert(r == 0);
        value++;
        pthread_mutex_unlock(&m);
    }
    return NULL;
}

int main(void) {
    pthread_mutexattr_init(&attr);
    pthread_mutexattr_setrobust(&attr, PTHREAD_MUTEX_ROBUST);
    pthread_mutex_init(&m, &attr);
    pthread_t t[2];
    pthread_create(&t[0], NULL, dier, NULL);
    pthread_join(t[0], NULL);
    assert(pthread_mutex_lock(&m) == EOWNERDEAD);
    pthread_mutex_unlock(&m);  // without consistent: not recoverable
    assert(pthread_mutex_lock(&m) == ENOTRECOVERABLE);
    pthread_mutex_destroy(&m);
    pthread_mutex_init(&m, &attr);
    pthread_create(&t[0], NULL, user, NULL);
    pthread_create(&t[1], NULL, user, NULL);
    int r = pthread_mutex_lock(&m);
    assert(r == 0);
    value++;
    pthread_mutex_unlock(&m);
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    assert(value == 5);
    printf("value %d\n", value);
    return 0;
}
