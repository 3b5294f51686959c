/* Correct: an atexit handler stops a background worker (a flag and a broadcast) and joins
 * it. Before 2026-11-27 exit handlers ran after the process exit was posted, uncontrolled:
 * the broadcast never reached the worker, waiting in the model, and the join hung until the
 * step timeout in every run. */
#include <pthread.h>
#include <stdlib.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t c = PTHREAD_COND_INITIALIZER;
static int stop, ticks;
static pthread_t bg;

static void *worker(void *arg) {
    pthread_mutex_lock(&m);
    while (!stop) {
        ticks++;
        pthread_cond_wait(&c, &m);
    }
    pthread_mutex_unlock(&m);
    return arg;
}

static void shutdown_worker(void) {
    pthread_mutex_lock(&m);
    stop = 1;
    pthread_cond_broadcast(&c);
    pthread_mutex_unlock(&m);
    pthread_join(bg, NULL);
}

int main(void) {
    pthread_create(&bg, NULL, worker, NULL);
    atexit(shutdown_worker);
    for (int i = 0; i < 3; i++) {
        pthread_mutex_lock(&m);
        pthread_cond_signal(&c);
        pthread_mutex_unlock(&m);
    }
    return 0;
}
