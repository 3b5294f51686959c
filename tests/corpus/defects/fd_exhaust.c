/* A correct program whose threads are all alive at once (a barrier), run with a low limit
 * of open files (set by the program itself): libpos's connection for a thread cannot be
 * opened (EMFILE). That is a limit of the harness, not a bug of the program: the run must
 * be an `error` with the reason, never `exit-code` or `crash`. */
#include <pthread.h>
#include <stdio.h>
#include <sys/resource.h>

#define N 24

static pthread_barrier_t bar;

static void *worker(void *arg) {
    (void)arg;
    pthread_barrier_wait(&bar);
    return NULL;
}

int main(void) {
    struct rlimit r = {16, 16};
    if (setrlimit(RLIMIT_NOFILE, &r) != 0) {
        perror("setrlimit");
        return 3;
    }
    pthread_t t[N];
    pthread_barrier_init(&bar, NULL, N + 1);
    for (int i = 0; i < N; i++)
        if (pthread_create(&t[i], NULL, worker, NULL) != 0)
            return 4;
    pthread_barrier_wait(&bar);
    for (int i = 0; i < N; i++)
        pthread_join(t[i], NULL);
    return 0;
}
