/* Mutexes in static storage, on main's stack and on the heap guard a lost update: each
 * worker reads the heap counter under one lock and writes it back under another. Schedules
 * name the mutexes by address, so two runs agree byte for byte only if every run lays out
 * its stack and heap the same way (a forked run as a spawned one). */
#include <assert.h>
#include <pthread.h>
#include <stdlib.h>

static pthread_mutex_t global = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t *heap;
static int *counter;

static void *worker(void *arg) {
    pthread_mutex_t *stack = arg;
    pthread_mutex_lock(heap);
    int v = *counter;
    pthread_mutex_unlock(heap);
    pthread_mutex_lock(&global);
    pthread_mutex_lock(stack);
    *counter = v + 1;
    pthread_mutex_unlock(stack);
    pthread_mutex_unlock(&global);
    return NULL;
}

int main(void) {
    char *noise = malloc(37);
    heap = malloc(sizeof *heap);
    counter = calloc(1, sizeof *counter);
    pthread_mutex_init(heap, NULL);
    pthread_mutex_t stack;
    pthread_mutex_init(&stack, NULL);
    pthread_t t[2];
    for (int i = 0; i < 2; i++) pthread_create(&t[i], NULL, worker, &stack);
    for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
    assert(*counter == 2);
    free(noise);
    return 0;
}
