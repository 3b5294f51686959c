/* Compiled with -fsanitize=thread and linked against libpos: a plain `x++` in two threads
 * has no sync point between its read and write, so only memory-access points (mem or races
 * mode) can interleave them and lose an update; the atomic counter never loses one. */
#include <assert.h>
#include <pthread.h>
#include <stdatomic.h>

static int x;
static atomic_int y;
static _Atomic __int128 wide;

static void *inc(void *arg) {
    (void)arg;
    x++;
    atomic_fetch_add(&y, 1);
    __int128 e = 0;
    while (!atomic_compare_exchange_weak(&wide, &e, e + 1)) {
    }
    return NULL;
}

int main(void) {
    pthread_t a, b;
    pthread_create(&a, NULL, inc, NULL);
    pthread_create(&b, NULL, inc, NULL);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    assert(atomic_load(&y) == 2);
    assert(atomic_load(&wide) == 2);
    assert(x == 2);
    return 0;
}
