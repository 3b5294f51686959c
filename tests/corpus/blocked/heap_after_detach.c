/* Determinism of the heap: four detached threads allocate and exit, then four more threads
 * each lock a mutex inside an object they malloc (so its heap address is in the schedule).
 * Past its exit a thread still runs glibc's teardown (which returns its malloc arena for
 * the next new thread to reuse); if that raced with the next granted thread, the later
 * threads' heap addresses, hence the schedule's text, would change from run to run with
 * the same seed. Correct: never a bug. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

struct obj {
    pthread_mutex_t lock;
    int n;
};

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static int done;

static void *first(void *arg) {
    char *p = malloc(100 + (long)arg);
    memset(p, 1, 100 + (long)arg);
    free(malloc(5000));
    pthread_mutex_lock(&m);
    done++;
    pthread_mutex_unlock(&m);
    free(p);
    return NULL;
}

static void *second(void *arg) {
    struct obj *o = malloc(sizeof *o + (long)arg);
    pthread_mutex_init(&o->lock, NULL);
    pthread_mutex_lock(&o->lock);
    o->n = 1;
    pthread_mutex_unlock(&o->lock);
    pthread_mutex_destroy(&o->lock);
    return o;
}

int main(void) {
    pthread_t t[4];
    for (long i = 0; i < 4; i++) {
        pthread_create(&t[i], NULL, first, (void *)i);
        pthread_detach(t[i]);
    }
    for (;;) {
        pthread_mutex_lock(&m);
        int d = done;
        pthread_mutex_unlock(&m);
        if (d == 4) break;
        sched_yield();
    }
    for (long i = 0; i < 4; i++) pthread_create(&t[i], NULL, second, (void *)i);
    for (long i = 0; i < 4; i++) {
        void *o;
        pthread_join(t[i], &o);
        free(o);
    }
    return 0;
}
