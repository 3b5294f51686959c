/*
 * twostage_100.c -- SCTBench twostage_100_bad: twostage with many threads.
 *
 * Usage: twostage_100 [NTHREADS]   (default 100; NTHREADS-1 stage threads
 *   are created first, then 1 checker thread; 2 <= NTHREADS <= 200)
 *
 * Pattern: same as twostage.c. Every stage thread sets data1 = 1 under m1,
 *   then data2 = data1 + 1 under m2.
 * Bug: the checker must run its two critical sections after the first
 *   stage thread's m1 section but before ANY stage thread's m2 section. With
 *   99 stage threads (created before the checker) this is rare. Reachable
 *   with pthread-call points only.
 * Cost: about 6 pthread calls + 3 shared accesses per stage thread.
 * Expected: assertion failure in the checker in the bad interleaving.
 */
#undef NDEBUG
#include <assert.h>
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>

#define MAX_THREADS 200

static pthread_mutex_t m1 = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t m2 = PTHREAD_MUTEX_INITIALIZER;
static int data1;
static int data2;

static void *stage(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&m1);
    data1 = 1;
    pthread_mutex_unlock(&m1);
    /* BUG: data1 is visible but data2 is not yet consistent */
    pthread_mutex_lock(&m2);
    data2 = data1 + 1;
    pthread_mutex_unlock(&m2);
    return NULL;
}

static void *check(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&m1);
    if (data1 == 0) {
        pthread_mutex_unlock(&m1);
        return NULL;
    }
    int t1 = data1;
    pthread_mutex_unlock(&m1);
    pthread_mutex_lock(&m2);
    int t2 = data2;
    pthread_mutex_unlock(&m2);
    assert(t2 == t1 + 1);
    return NULL;
}

int main(int argc, char **argv)
{
    static pthread_t t[MAX_THREADS];
    int n = argc > 1 ? atoi(argv[1]) : 100;
    if (n < 2)
        n = 2;
    if (n > MAX_THREADS)
        n = MAX_THREADS;
    for (int i = 0; i < n - 1; i++)
        pthread_create(&t[i], NULL, stage, NULL);
    pthread_create(&t[n - 1], NULL, check, NULL);
    for (int i = 0; i < n; i++)
        pthread_join(t[i], NULL);
    return 0;
}
