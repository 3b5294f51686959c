/* Programs the target runs (system -> /bin/sh) are not controlled: libpos removed itself
 * from LD_PRELOAD and POSCHECK_SOCKET from the environment. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static void *worker(void *arg) {
    (void)arg;
    fflush(stdout);
    return (void *)(long)system("echo \"child LD_PRELOAD=[$LD_PRELOAD] POSCHECK_SOCKET=[$POSCHECK_SOCKET]\"");
}

int main(void) {
    pthread_t t;
    void *r;
    pthread_create(&t, NULL, worker, NULL);
    pthread_join(t, &r);
    return r == NULL ? 0 : 1;
}
