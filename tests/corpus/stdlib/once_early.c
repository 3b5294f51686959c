// A once control completed before libpos controls the program: a `.preinit_array`
// function (run before every library's constructor, libpos's included) calls
// pthread_once; then threads call it again. The init must have run exactly once, so every
// later call returns at once without running it.
#include <assert.h>
#include <pthread.h>
#include <stdio.h>

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int inits;

static void init(void) { inits++; }

static void early(void) { pthread_once(&once, init); }
__attribute__((section(".preinit_array"), used)) static void (*early_p)(void) = early;

static void *worker(void *arg) {
    (void)arg;
    pthread_once(&once, init);
    assert(inits == 1);
    return NULL;
}

int main(void) {
    assert(inits == 1);
    pthread_t t[2];
    for (int i = 0; i < 2; i++)
        pthread_create(&t[i], NULL, worker, NULL);
    pthread_once(&once, init);
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    assert(inits == 1);
    printf("inits %d\n", inits);
    return 0;
}
