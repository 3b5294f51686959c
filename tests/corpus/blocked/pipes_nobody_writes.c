/* Hung: two threads each read() from a pipe nobody ever writes (each waits for the other's
 * pipe, and neither writes before reading). Every live thread is blocked outside control
 * for good: a hang, not a bug to hide. */
#include <pthread.h>
#include <unistd.h>

static int a[2], b[2];

static void *one(void *arg) {
    char c;
    if (read(a[0], &c, 1) == 1) {
        if (write(b[1], &c, 1) != 1) return NULL;
    }
    return arg;
}

static void *two(void *arg) {
    char c;
    if (read(b[0], &c, 1) == 1) {
        if (write(a[1], &c, 1) != 1) return NULL;
    }
    return arg;
}

int main(void) {
    if (pipe(a) != 0 || pipe(b) != 0) return 5;
    pthread_t x, y;
    pthread_create(&x, NULL, one, NULL);
    pthread_create(&y, NULL, two, NULL);
    pthread_join(x, NULL);
    pthread_join(y, NULL);
    return 0;
}
