// Correct (C11 <threads.h>): three threads increment a counter under a plain mutex, with
// thrd_yield inside the critical section, a recursive mutex taken twice, call_once for the
// set-up and thrd_join collecting each thread's int result. Never a bug.
#include <assert.h>
#include <threads.h>

enum { THREADS = 3, ROUNDS = 3 };
static mtx_t m, rec;
static once_flag once = ONCE_FLAG_INIT;
static int counter, inits;

static void init(void) { inits++; }

static int worker(void *arg) {
    call_once(&once, init);
    for (int i = 0; i < ROUNDS; i++) {
        assert(mtx_lock(&m) == thrd_success);
        int v = counter;
        thrd_yield();
        counter = v + 1;
        assert(mtx_unlock(&m) == thrd_success);
    }
    assert(mtx_lock(&rec) == thrd_success);
    assert(mtx_lock(&rec) == thrd_success);
    assert(mtx_unlock(&rec) == thrd_success);
    assert(mtx_unlock(&rec) == thrd_success);
    return (int)(long)arg * 10;
}

int main(void) {
    thrd_t t[THREADS];
    assert(mtx_init(&m, mtx_plain) == thrd_success);
    assert(mtx_init(&rec, mtx_plain | mtx_recursive) == thrd_success);
    for (long i = 0; i < THREADS; i++)
        assert(thrd_create(&t[i], worker, (void *)i) == thrd_success);
    for (int i = 0; i < THREADS; i++) {
        int res = -1;
        assert(thrd_join(t[i], &res) == thrd_success);
        assert(res == i * 10);
    }
    assert(counter == THREADS * ROUNDS);
    assert(inits == 1);
    mtx_destroy(&m);
    mtx_destroy(&rec);
    return 0;
}
