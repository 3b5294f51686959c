// Buggy (C11 <threads.h>): a table is initialised lazily with a check-then-act instead of
// call_once; two threads can both see it uninitialised and both initialise it.
#include <assert.h>
#include <threads.h>

static int initialised, inits;
static mtx_t m;

static void init_table(void) {
    mtx_lock(&m);
    inits++;
    mtx_unlock(&m);
    initialised = 1;
}

static int user(void *arg) {
    (void)arg;
    if (!initialised) {
        thrd_yield();
        init_table();
    }
    return 0;
}

int main(void) {
    thrd_t a, b;
    mtx_init(&m, mtx_plain);
    thrd_create(&a, user, NULL);
    thrd_create(&b, user, NULL);
    thrd_join(a, NULL);
    thrd_join(b, NULL);
    assert(inits == 1 && "table initialised twice");
    return 0;
}
