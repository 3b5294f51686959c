/* A busy-wait with no scheduling point on a flag nobody sets before the join: the spinner
 * never posts again, so the coordinator can never decide. Reported as a hang (natively the
 * program hangs too). */
#include <pthread.h>

static volatile int flag;

static void *spin(void *arg) {
    (void)arg;
    while (!flag) {
    }
    return NULL;
}

int main(void) {
    pthread_t t;
    pthread_create(&t, NULL, spin, NULL);
    pthread_join(t, NULL);
    flag = 1;
    return 0;
}
