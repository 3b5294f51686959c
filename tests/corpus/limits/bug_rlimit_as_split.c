/* ok_rlimit_as.c's program with main's increment split into two lock sections (a read,
 * then a write): a worker's increments between them are lost. */
#define _GNU_SOURCE
#include <assert.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static int count;

static void *work(void *a) {
    char *p = malloc(1 << 20);
    memset(p, 1, 1 << 20);
    for (int i = 0; i < 2; i++) {
        pthread_mutex_lock(&m);
        count++;
        pthread_mutex_unlock(&m);
    }
    free(p);
    return a;
}

int main(void) {
    struct rlimit r = {256 << 20, 256 << 20};
    if (setrlimit(RLIMIT_AS, &r) != 0) {
        perror("setrlimit");
        return 2;
    }
    pthread_t t[2];
    for (int i = 0; i < 2; i++) {
        int e = pthread_create(&t[i], NULL, work, NULL);
        if (e != 0) {
            fprintf(stderr, "pthread_create: %s\n", strerror(e));
            return 3;
        }
    }
    pthread_mutex_lock(&m);
    int seen = count;
    pthread_mutex_unlock(&m);
    pthread_mutex_lock(&m); /* BUG: the read and the write are two sections */
    count = seen + 1;
    pthread_mutex_unlock(&m);
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    assert(count == 5);
    return 0;
}
