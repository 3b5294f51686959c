/* A worker adds a shared buffer into a total under a second lock, but tells main it has
 * started before it does: main, woken, frees the buffer. When main runs between the
 * worker's two lock sections, the worker reads freed memory, which AddressSanitizer
 * reports (the run ends with its report and exit status 1). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t total_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int started;
static char *shared;
static int sum;

static void *work(void *a) {
    pthread_mutex_lock(&m);
    started = 1; /* BUG: announced before the buffer is read */
    pthread_cond_signal(&cv);
    pthread_mutex_unlock(&m);
    pthread_mutex_lock(&total_lock);
    sum += shared[0] + shared[1];
    pthread_mutex_unlock(&total_lock);
    return a;
}

int main(void) {
    shared = malloc(16);
    memset(shared, 1, 16);
    pthread_t t;
    pthread_create(&t, NULL, work, NULL);
    pthread_mutex_lock(&m);
    while (!started)
        pthread_cond_wait(&cv, &m);
    pthread_mutex_unlock(&m);
    free(shared);
    pthread_join(t, NULL);
    pthread_mutex_lock(&total_lock);
    printf("%d\n", sum);
    pthread_mutex_unlock(&total_lock);
    return 0;
}
