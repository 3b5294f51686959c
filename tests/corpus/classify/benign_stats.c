/* Two workers each process their own half of a job list and add the results to
 * a shared sum under a mutex. Each also bumps a statistics counter
 * ("jobs_seen") without the lock: updates of it can be lost, but nobody prints
 * or checks it. The output is the sum, which the lock protects. */
#include <pthread.h>
#include <stdio.h>

#define JOBS 4

static pthread_mutex_t sum_lock = PTHREAD_MUTEX_INITIALIZER;
static const int jobs[JOBS] = {3, 5, 7, 11};
static int done_sum;
static int jobs_seen; /* statistics only */

static void *worker(void *arg)
{
    int first = *(int *)arg;
    for (int i = first; i < first + JOBS / 2; i++) {
        int result = jobs[i] * 2;
        jobs_seen++;
        pthread_mutex_lock(&sum_lock);
        done_sum += result;
        pthread_mutex_unlock(&sum_lock);
    }
    return NULL;
}

int main(void)
{
    pthread_t t[2];
    int first[2] = {0, JOBS / 2};
    for (int i = 0; i < 2; i++)
        pthread_create(&t[i], NULL, worker, &first[i]);
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    printf("sum of doubled jobs: %d\n", done_sum);
    return 0;
}
