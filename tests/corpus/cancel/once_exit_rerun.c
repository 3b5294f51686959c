/* Correct: the init routine of pthread_once ends its thread with pthread_exit on its first
 * call. The thread's unwinding resets the once control (glibc's cleanup handler, as POSIX
 * asks for cancellation), so main's later pthread_once runs the init a second time. */
#include <assert.h>
#include <pthread.h>

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int calls;

static void init(void) {
    if (++calls == 1)
        pthread_exit(NULL);
}

static void *first(void *arg) {
    (void)arg;
    pthread_once(&once, init);
    return NULL;
}

int main(void) {
    pthread_t t;
    pthread_create(&t, NULL, first, NULL);
    pthread_join(t, NULL);
    pthread_once(&once, init);
    assert(calls == 2);
    return 0;
}
