/*
 * wronglock.c -- SCTBench wronglock_bad: threads guard one variable with
 * different mutexes.
 *
 * Pattern: funcA increments `data` under lock1 and checks the increment;
 *   three funcB threads increment `data` under lock2.
 * Bug: lock1 and lock2 do not exclude each other, so a funcB write can land
 *   inside funcA's critical section (between its reads and write of data).
 *   funcA's critical section contains no pthread call, so memory-access
 *   scheduling points are needed.
 * Expected: assertion failure in funcA in the bad interleaving.
 */
#undef NDEBUG
#include <assert.h>
#include <pthread.h>
#include <sched.h>
#include <stddef.h>

#ifdef POS_STRESS /* native evidence builds only: widen the race window */
#define STRESS() sched_yield()
#else
#define STRESS() ((void)0)
#endif

#define NUM_B 3

static pthread_mutex_t lock1 = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t lock2 = PTHREAD_MUTEX_INITIALIZER;
static volatile int data;

static void *funcA(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&lock1);
    int x = data;
    STRESS();
    data++;
    STRESS();
    assert(data == x + 1);
    pthread_mutex_unlock(&lock1);
    return NULL;
}

static void *funcB(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&lock2); /* BUG: wrong lock */
    data++;
    pthread_mutex_unlock(&lock2);
    return NULL;
}

int main(void)
{
    pthread_t a, b[NUM_B];
    pthread_create(&a, NULL, funcA, NULL);
    for (int i = 0; i < NUM_B; i++)
        pthread_create(&b[i], NULL, funcB, NULL);
    pthread_join(a, NULL);
    for (int i = 0; i < NUM_B; i++)
        pthread_join(b[i], NULL);
    return 0;
}
