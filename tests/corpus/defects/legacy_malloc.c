/* Legacy C that calls malloc/free/strlen without including <stdlib.h>/<string.h> (implicit
 * declarations, accepted by gcc 12 and clang 14 with a warning): plain builds know them as
 * built-ins and return a full pointer. `poscheck cc` must build it so that it runs the same
 * (a blanket -fno-builtin made malloc `int malloc()` and the program crashed). Correct:
 * two threads fill their own heap buffer under a mutex. */
#include <pthread.h>
#include <stdio.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static long total;

static void *worker(void *arg) {
    /* 1 MiB: mapped above 4 GiB, so a truncated pointer cannot work by luck. */
    char *buf = malloc(1 << 20);
    buf[(1 << 20) - 1] = 0;
    memset(buf, 'x', 64);
    buf[64] = 0;
    pthread_mutex_lock(&m);
    total += (long)strlen(buf) + (long)arg;
    pthread_mutex_unlock(&m);
    free(buf);
    return NULL;
}

int main(void) {
    pthread_t a, b;
    pthread_create(&a, NULL, worker, (void *)0);
    pthread_create(&b, NULL, worker, (void *)1);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    printf("total %ld\n", total);
    return total == 129 ? 0 : 1;
}
