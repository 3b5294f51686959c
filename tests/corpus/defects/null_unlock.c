/* Buggy: a worker unlocks a NULL mutex (a crash inside the interposed
 * pthread_mutex_unlock). The crash must be located at the program's call site
 * (unlock_shared), not "in libpos.so" or libc. */
#include <pthread.h>
#include <stddef.h>

static pthread_mutex_t *shared;

__attribute__((noinline)) void unlock_shared(void) { pthread_mutex_unlock(shared); }

static void *worker(void *arg) {
    (void)arg;
    unlock_shared();
    return NULL;
}

int main(void) {
    pthread_t t;
    pthread_create(&t, NULL, worker, NULL);
    pthread_join(t, NULL);
    return 0;
}
