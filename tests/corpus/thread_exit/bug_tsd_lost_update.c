/* Buggy: each worker's thread-specific-data destructor adds its value to a total in two
 * critical sections (read, then write): two destructors can interleave and lose an update.
 * Before 2026-11-27 the destructors ran uncontrolled and the bug was never found. */
#include <assert.h>
#include <pthread.h>
#include <stdlib.h>

static pthread_key_t key;
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static int total;

static void add(void *p) {
    pthread_mutex_lock(&m);
    int v = total;
    pthread_mutex_unlock(&m);
    v += *(int *)p;
    pthread_mutex_lock(&m);
    total = v;
    pthread_mutex_unlock(&m);
    free(p);
}

static void *worker(void *arg) {
    int *p = malloc(sizeof *p);
    *p = (int)(long)arg;
    pthread_setspecific(key, p);
    return NULL;
}

int main(void) {
    pthread_key_create(&key, add);
    pthread_t t[3];
    for (long i = 0; i < 3; i++)
        pthread_create(&t[i], NULL, worker, (void *)(i + 1));
    for (int i = 0; i < 3; i++)
        pthread_join(t[i], NULL);
    assert(total == 6);
    return 0;
}
