// Buggy (C11 <threads.h>): the waiter calls cnd_wait without checking a condition first;
// when the signaller runs first, its cnd_signal is lost and the waiter blocks forever
// while main waits in thrd_join: a deadlock.
#include <threads.h>

static mtx_t m;
static cnd_t c;
static int done;

static int waiter(void *arg) {
    (void)arg;
    mtx_lock(&m);
    cnd_wait(&c, &m); // should be: while (!done) cnd_wait(...)
    mtx_unlock(&m);
    return 0;
}

static int signaller(void *arg) {
    (void)arg;
    mtx_lock(&m);
    done = 1;
    cnd_signal(&c);
    mtx_unlock(&m);
    return 0;
}

int main(void) {
    thrd_t a, b;
    mtx_init(&m, mtx_plain);
    cnd_init(&c);
    thrd_create(&a, waiter, NULL);
    thrd_create(&b, signaller, NULL);
    thrd_join(a, NULL);
    thrd_join(b, NULL);
    return done ? 0 : 1;
}
