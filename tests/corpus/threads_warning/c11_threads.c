/* Threads from C11 <threads.h> only (thrd_create, mtx_lock): no warning. */
#include <assert.h>
#include <threads.h>

static mtx_t m;
static int n;

static int worker(void *arg) {
    (void)arg;
    mtx_lock(&m);
    n++;
    mtx_unlock(&m);
    return 0;
}

int main(void) {
    thrd_t a, b;
    mtx_init(&m, mtx_plain);
    thrd_create(&a, worker, NULL);
    thrd_create(&b, worker, NULL);
    thrd_join(a, NULL);
    thrd_join(b, NULL);
    assert(n == 2);
    return 0;
}
