/* A program that limits its own address space (setrlimit(RLIMIT_AS, 256 MiB)), then starts
 * four threads that allocate and count under a mutex. Correct; natively it is far below its
 * limit. Before 2026-11-28 every run under poscheck failed at pthread_create (EAGAIN): the
 * address space libpos reserves for itself was charged to the program. The limit still
 * holds (a 256 GiB reservation fails) and reads back as set. */
#define _GNU_SOURCE
#include <assert.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
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
    pthread_t t[4];
    for (int i = 0; i < 4; i++) {
        int e = pthread_create(&t[i], NULL, work, NULL);
        if (e != 0) {
            fprintf(stderr, "pthread_create: %s\n", strerror(e));
            return 3;
        }
    }
    for (int i = 0; i < 4; i++)
        pthread_join(t[i], NULL);
    struct rlimit g;
    getrlimit(RLIMIT_AS, &g);
    assert(g.rlim_cur == r.rlim_cur && g.rlim_max == r.rlim_max);
    void *big = mmap(NULL, 256UL << 30, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    assert(big == MAP_FAILED);
    assert(count == 8);
    return 0;
}
