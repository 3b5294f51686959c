/* Two workers each compute half of a sum under a lock, and both set the shared
 * "work_started" flag without one: they write the same value, so whichever
 * write comes last, the flag ends up 1. A data race, and a harmless one. */
#include <pthread.h>
#include <stdio.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int work_started;
static long total;

static void *worker(void *arg)
{
    long from = (long)arg, sum = 0;
    work_started = 1;
    for (long i = from; i < from + 50; i++)
        sum += i;
    pthread_mutex_lock(&lock);
    total += sum;
    pthread_mutex_unlock(&lock);
    return NULL;
}

int main(void)
{
    pthread_t a, b;
    pthread_create(&a, NULL, worker, (void *)0L);
    pthread_create(&b, NULL, worker, (void *)50L);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    printf("started=%d total=%ld\n", work_started, total);
    return 0;
}
