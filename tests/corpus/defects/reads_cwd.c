/* Reads its thread count from `nthreads.txt` in the working directory (none: no thread),
 * then its threads do a racy read - yield - write: buggy. A saved schedule must replay in
 * the working directory it was recorded in, or the program does something else. */
#include <assert.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>

static volatile int counter;

static void *worker(void *arg) {
    (void)arg;
    int v = counter;
    sched_yield();
    counter = v + 1;
    return NULL;
}

int main(void) {
    int n = 0;
    FILE *f = fopen("nthreads.txt", "r");
    if (f) {
        if (fscanf(f, "%d", &n) != 1 || n < 0 || n > 8)
            n = 0;
        fclose(f);
    }
    pthread_t t[8];
    for (int i = 0; i < n; i++)
        pthread_create(&t[i], NULL, worker, NULL);
    for (int i = 0; i < n; i++)
        pthread_join(t[i], NULL);
    assert(counter == n);
    return 0;
}
