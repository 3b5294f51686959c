/* recursive_trylock: two workers each lock a recursive mutex, try-lock it again inside
 * (which cannot fail: they own it), and record who came first. Two traces; with "strict"
 * as argv[1] main asserts that worker 1 was first, a bug in the other. odpor and dpor
 * explored 1 execution before 2026-11-27: the nested trylock was taken for an acquisition,
 * so the second worker's lock raced with it (a reversal that cannot run: the mutex is held)
 * instead of with the first worker's outer lock. Explore with `--points sync`. */
#include <assert.h>
#include <pthread.h>
#include <string.h>

static pthread_mutex_t m;
static int first;

static void *worker(void *arg) {
    int me = (int)(long)arg;
    pthread_mutex_lock(&m);
    int r = pthread_mutex_trylock(&m);
    assert(r == 0);
    if (first == 0) first = me;
    pthread_mutex_unlock(&m);
    pthread_mutex_unlock(&m);
    return NULL;
}

int main(int argc, char **argv) {
    int strict = argc > 1 && strcmp(argv[1], "strict") == 0;
    pthread_mutexattr_t a;
    pthread_mutexattr_init(&a);
    pthread_mutexattr_settype(&a, PTHREAD_MUTEX_RECURSIVE);
    pthread_mutex_init(&m, &a);
    pthread_t t1, t2;
    pthread_create(&t1, NULL, worker, (void *)1L);
    pthread_create(&t2, NULL, worker, (void *)2L);
    pthread_join(t1, NULL);
    pthread_join(t2, NULL);
    assert(!strict || first == 1);
    return 0;
}
