/* Mutexes on the heap, allocated while the run goes on (issue 15): their addresses name
 * them in the schedule, so libpos's own allocations must not move them (the baton
 * transport decides on the program's threads). Correct: always exits 0. */
#include <pthread.h>
#include <stdlib.h>

#define N 4

static void *worker(void *arg) {
    (void)arg;
    for (int i = 0; i < 20; i++) {
        pthread_mutex_t *m = malloc(sizeof *m);
        pthread_mutex_init(m, 0);
        pthread_mutex_lock(m);
        pthread_mutex_unlock(m);
        char *junk = malloc(100 + i * 37);
        junk[0] = 1;
        if (i % 3)
            free(junk);
        pthread_mutex_destroy(m);
        free(m);
    }
    return 0;
}

int main(void) {
    pthread_t t[N];
    pthread_mutex_t *m0 = malloc(sizeof *m0);
    pthread_mutex_init(m0, 0);
    for (int i = 0; i < N; i++) {
        pthread_create(&t[i], 0, worker, 0);
        pthread_mutex_lock(m0);
        pthread_mutex_unlock(m0);
    }
    for (int i = 0; i < N; i++)
        pthread_join(t[i], 0);
    return 0;
}
