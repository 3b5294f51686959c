/* Hung: a thread spins forever on a flag nobody sets, with no scheduling point and no
 * system call (it is running, not blocked): a hang. */
#include <pthread.h>

static volatile int flag;

static void *spin(void *arg) {
    while (!flag) {
    }
    return arg;
}

int main(void) {
    pthread_t t;
    pthread_create(&t, NULL, spin, NULL);
    pthread_join(t, NULL);
    return 0;
}
