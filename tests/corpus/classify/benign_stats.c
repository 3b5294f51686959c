/* A queue of jobs shared by two workers under a mutex; each worker also bumps
 * a statistics counter ("jobs_seen") without the lock. Updates of the counter
 * can be lost, but nobody prints or checks it: the output is the sum of the
 * jobs, which the lock protects. */
#include <pthread.h>
#include <stdio.h>

#define JOBS 4

static pthread_mutex_t qlock = PTHREAD_MUTEX_INITIALIZER;
static int queue[JOBS] = {3, 5, 7, 11};
static int next_job;
static int done_sum;
static int jobs_seen; /* statistics only */

static void *worker(void *arg)
{
    (void)arg;
    for (;;) {
        pthread_mutex_lock(&qlock);
        if (next_job == JOBS) {
            pthread_mutex_unlock(&qlock);
            break;
        }
        int job = queue[next_job++];
        pthread_mutex_unlock(&qlock);

        jobs_seen++;

        pthread_mutex_lock(&qlock);
        done_sum += job * 2;
        pthread_mutex_unlock(&qlock);
    }
    return NULL;
}

int main(void)
{
    pthread_t t[2];
    for (int i = 0; i < 2; i++)
        pthread_create(&t[i], NULL, worker, NULL);
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    printf("sum of doubled jobs: %d\n", done_sum);
    return 0;
}
