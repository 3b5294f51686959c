/*
 * once_reuse.c -- a pthread_once control in heap memory that a later control reuses.
 *
 * Pattern: each round allocates a once control, sets it to PTHREAD_ONCE_INIT, lets two
 *   threads race to pthread_once() on it, then frees it; malloc hands the same block to
 *   the next round (as every std::promise's once flag, in a freed shared state, is reused).
 * Correct: the init runs exactly once per round. A harness that remembers controls by
 *   address alone answers "already done" from the second round on.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define ROUNDS 3
static int calls;
static pthread_once_t *control;

static void init(void) { calls++; }

static void *caller(void *arg)
{
    (void)arg;
    pthread_once(control, init);
    return NULL;
}

int main(void)
{
    for (int round = 0; round < ROUNDS; round++) {
        control = malloc(sizeof *control);
        if (!control)
            return 2;
        *control = PTHREAD_ONCE_INIT;
        pthread_t t[2];
        for (int i = 0; i < 2; i++)
            pthread_create(&t[i], NULL, caller, NULL);
        for (int i = 0; i < 2; i++)
            pthread_join(t[i], NULL);
        free(control);
        if (calls != round + 1) {
            fprintf(stderr, "round %d: init ran %d times in all\n", round, calls);
            return 1;
        }
    }
    return 0;
}
