// Correct (C11 <threads.h>): a thread ends with thrd_exit (its result reaches thrd_join),
// another is detached and signals completion through a mutex and condition variable.
#include <assert.h>
#include <threads.h>

static mtx_t m;
static cnd_t c;
static int finished;

static int exiter(void *arg) {
    (void)arg;
    thrd_yield();
    thrd_exit(7);
}

static int detached(void *arg) {
    (void)arg;
    mtx_lock(&m);
    finished = 1;
    cnd_signal(&c);
    mtx_unlock(&m);
    return 0;
}

int main(void) {
    thrd_t a, b;
    int res = 0;
    mtx_init(&m, mtx_plain);
    cnd_init(&c);
    thrd_create(&a, exiter, NULL);
    thrd_create(&b, detached, NULL);
    assert(thrd_detach(b) == thrd_success);
    assert(thrd_join(a, &res) == thrd_success && res == 7);
    mtx_lock(&m);
    while (!finished)
        cnd_wait(&c, &m);
    mtx_unlock(&m);
    return 0;
}
