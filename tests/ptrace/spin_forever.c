/* A thread spins forever without a scheduling point while main joins it: a hang after the
 * step timeout (used to interrupt or kill poscheck while the program runs). */
#include <pthread.h>

static volatile int stop;

static void *spin(void *arg) {
    while (!stop) {
    }
    return arg;
}

int main(void) {
    pthread_t t;
    pthread_create(&t, NULL, spin, NULL);
    pthread_join(t, NULL);
    return 0;
}
