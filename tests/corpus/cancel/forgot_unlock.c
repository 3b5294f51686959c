// Buggy: the worker is cancelled in pthread_cond_wait, which re-acquires the mutex, but it
// has no cleanup handler to unlock it: main's later lock deadlocks.
#include <pthread.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t c = PTHREAD_COND_INITIALIZER;
static int ready;

static void *worker(void *arg) {
    (void)arg;
    pthread_mutex_lock(&m);
    while (!ready)
        pthread_cond_wait(&c, &m);
    pthread_mutex_unlock(&m);
    return NULL;
}

int main(void) {
    pthread_t t;
    pthread_create(&t, NULL, worker, NULL);
    pthread_cancel(t);
    pthread_join(t, NULL);
    pthread_mutex_lock(&m);
    ready = 1;
    pthread_mutex_unlock(&m);
    return 0;
}
