/* A program that is not deterministic under the schedule: each run reads and bumps a
 * counter in the file named by $EXPLORE_FLIP, and on odd runs main writes a global before
 * creating the threads. So a forced prefix recorded in one run starts with an event the next
 * run does not have, and `poscheck explore` must report the divergence instead of exploring.
 * Two threads race on x so that there is a second run to force.
 * Build with `poscheck cc -O1`, explore with `--points mem`. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

volatile int x;
volatile int odd_run;

static void *writer(void *arg) {
    x = (int)(long)arg;
    return NULL;
}

static int bump_counter(void) {
    const char *path = getenv("EXPLORE_FLIP");
    if (!path) return 0;
    int n = 0;
    FILE *f = fopen(path, "r");
    if (f) {
        if (fscanf(f, "%d", &n) != 1) n = 0;
        fclose(f);
    }
    f = fopen(path, "w");
    if (f) {
        fprintf(f, "%d\n", n + 1);
        fclose(f);
    }
    return n;
}

int main(void) {
    if (bump_counter() % 2) odd_run = 1;
    pthread_t a, b;
    pthread_create(&a, NULL, writer, (void *)1);
    pthread_create(&b, NULL, writer, (void *)2);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    return 0;
}
