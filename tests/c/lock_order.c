/* Lock-order inversion: thread 0.1 takes a then b, thread 0.2 takes b then a.
 * `lock_order addrs` prints the two mutex addresses (built -no-pie: fixed). */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

pthread_mutex_t a = PTHREAD_MUTEX_INITIALIZER, b = PTHREAD_MUTEX_INITIALIZER;

static void *t1(void *x) {
    pthread_mutex_lock(&a);
    pthread_mutex_lock(&b);
    pthread_mutex_unlock(&b);
    pthread_mutex_unlock(&a);
    return x;
}

static void *t2(void *x) {
    pthread_mutex_lock(&b);
    pthread_mutex_lock(&a);
    pthread_mutex_unlock(&a);
    pthread_mutex_unlock(&b);
    return x;
}

int main(int argc, char **argv) {
    if (argc > 1 && strcmp(argv[1], "addrs") == 0) {
        printf("%p %p\n", (void *)&a, (void *)&b);
        return 0;
    }
    pthread_t x, y;
    pthread_create(&x, NULL, t1, NULL);
    pthread_create(&y, NULL, t2, NULL);
    pthread_join(x, NULL);
    pthread_join(y, NULL);
    return 0;
}
