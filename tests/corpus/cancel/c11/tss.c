// Correct (C11 <threads.h>): each thread keeps its own buffer in thread-specific storage
// (tss_create with a destructor), set up once per thread; the destructor frees it at
// thread exit. The count of destructor calls is kept under a mutex. Never a bug.
#include <assert.h>
#include <stdlib.h>
#include <threads.h>

enum { THREADS = 3 };
static tss_t key;
static mtx_t m;
static once_flag once = ONCE_FLAG_INIT;
static int destroyed, inits;

static void init(void) { inits++; }

static void release(void *p) {
    mtx_lock(&m);
    destroyed++;
    mtx_unlock(&m);
    free(p);
}

static int worker(void *arg) {
    call_once(&once, init);
    int *mine = malloc(sizeof *mine);
    *mine = (int)(long)arg;
    assert(tss_get(key) == NULL);
    assert(tss_set(key, mine) == thrd_success);
    thrd_yield();
    assert(tss_get(key) == mine && *mine == (int)(long)arg);
    return *mine;
}

int main(void) {
    thrd_t t[THREADS];
    assert(mtx_init(&m, mtx_plain) == thrd_success);
    assert(tss_create(&key, release) == thrd_success);
    for (long i = 0; i < THREADS; i++)
        assert(thrd_create(&t[i], worker, (void *)i) == thrd_success);
    for (int i = 0; i < THREADS; i++) {
        int res = -1;
        assert(thrd_join(t[i], &res) == thrd_success && res == i);
    }
    assert(destroyed == THREADS && inits == 1);
    tss_delete(key);
    mtx_destroy(&m);
    return 0;
}
