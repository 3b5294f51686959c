/* A library of the program's own that creates the threads: the program imports no
   thread-creating function itself, so the library's imports count (transitively). */
#include <pthread.h>

static int n;
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;

static void *work(void *arg) {
    (void)arg;
    pthread_mutex_lock(&m);
    n++;
    pthread_mutex_unlock(&m);
    return NULL;
}

int run_workers(void) {
    pthread_t a, b;
    pthread_create(&a, NULL, work, NULL);
    pthread_create(&b, NULL, work, NULL);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    return n;
}
