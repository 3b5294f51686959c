/*
 * errcheck_trylock.c -- the error codes of an error-checking mutex.
 *
 * Pattern: the owner of a PTHREAD_MUTEX_ERRORCHECK mutex tries it again (EBUSY: trylock
 *   fails on a mutex held by anyone, its caller included), locks it again (EDEADLK), and
 *   another thread tries it meanwhile (EBUSY). Correct under POSIX and glibc.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

static pthread_mutex_t m = PTHREAD_ERRORCHECK_MUTEX_INITIALIZER_NP;
static int other;

static void *try_it(void *arg)
{
    (void)arg;
    int r = pthread_mutex_trylock(&m);
    if (r == 0)
        pthread_mutex_unlock(&m);
    else if (r != EBUSY)
        abort();
    other = 1;
    return NULL;
}

int main(void)
{
    pthread_t t;
    pthread_create(&t, NULL, try_it, NULL);
    if (pthread_mutex_lock(&m) != 0)
        return 1;
    if (pthread_mutex_trylock(&m) != EBUSY)
        return 2;
    if (pthread_mutex_lock(&m) != EDEADLK)
        return 3;
    pthread_mutex_unlock(&m);
    pthread_join(t, NULL);
    return other ? 0 : 4;
}
