// Correct: a reader thread blocked in read() on a pipe (a cancellation point libpos does not
// control: the thread is blocked outside control) is cancelled at shutdown; glibc acts on
// the real cancellation there and the cleanup handler closes the pipe. Never a bug.
#include <assert.h>
#include <pthread.h>
#include <unistd.h>

static int fds[2], closed;

static void close_it(void *a) { (void)a; close(fds[0]); closed = 1; }

static void *reader(void *a) {
    (void)a;
    char buf[16];
    pthread_cleanup_push(close_it, NULL);
    while (read(fds[0], buf, sizeof buf) > 0)
        ;
    pthread_cleanup_pop(1);
    return NULL;
}

int main(void) {
    pthread_t t; void *r;
    assert(pipe(fds) == 0);
    pthread_create(&t, NULL, reader, NULL);
    assert(write(fds[1], "x", 1) == 1);
    pthread_cancel(t);
    pthread_join(t, &r);
    assert(r == PTHREAD_CANCELED && closed);
    return 0;
}
