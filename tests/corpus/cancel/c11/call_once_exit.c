/* Correct: a C11 call_once routine ends its thread with thrd_exit on its first call; the
 * once flag is reset by the unwinding (glibc's call_once is pthread_once), so main's later
 * call_once runs the routine again. */
#include <assert.h>
#include <threads.h>

static once_flag flag = ONCE_FLAG_INIT;
static int calls;

static void init(void) {
    if (++calls == 1)
        thrd_exit(0);
}

static int first(void *arg) {
    (void)arg;
    call_once(&flag, init);
    return 0;
}

int main(void) {
    thrd_t t;
    thrd_create(&t, first, NULL);
    thrd_join(t, NULL);
    call_once(&flag, init);
    assert(calls == 2);
    return 0;
}
