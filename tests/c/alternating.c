/*
 * alternating.c -- a program whose every other run takes another path: it counts its runs
 * in the file named by argv[1], and on odd counts takes a lock the even runs do not. It
 * always exits 1 (a `bad exit`, so that `poscheck run` saves its schedule).
 *
 * Expected: a schedule recorded on an even run replays exactly on even runs and diverges
 *   on odd ones; `poscheck replay --times 4` counts both (2 reproduced, 2 diverged) instead
 *   of stopping at the first divergence. Pthread-call points suffice.
 */
#include <pthread.h>
#include <stdio.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;

static void *worker(void *arg)
{
    return arg;
}

int main(int argc, char **argv)
{
    if (argc != 2)
        return 2;
    int n = 0;
    FILE *f = fopen(argv[1], "r");
    if (f) {
        if (fscanf(f, "%d", &n) != 1)
            n = 0;
        fclose(f);
    }
    f = fopen(argv[1], "w");
    if (!f)
        return 2;
    fprintf(f, "%d\n", n + 1);
    fclose(f);
    pthread_t t;
    pthread_create(&t, NULL, worker, NULL);
    if (n % 2) {
        pthread_mutex_lock(&m);
        pthread_mutex_unlock(&m);
    }
    pthread_join(t, NULL);
    return 1;
}
