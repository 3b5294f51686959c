/* Two workers each sum their half of an array; each records itself as the
 * "last to finish" without a lock, and main prints who finished last. The
 * program never fails, but which thread it names depends on the order of the
 * two writes: a race that changes the output. */
#include <pthread.h>
#include <stdio.h>

static int values[8] = {1, 2, 3, 4, 5, 6, 7, 8};
static long sums[2];
static int last_to_finish;

static void *worker(void *arg)
{
    int id = *(int *)arg;
    for (int i = id * 4; i < id * 4 + 4; i++)
        sums[id] += values[i];
    last_to_finish = id + 1;
    return NULL;
}

int main(void)
{
    pthread_t t[2];
    int ids[2] = {0, 1};
    for (int i = 0; i < 2; i++)
        pthread_create(&t[i], NULL, worker, &ids[i]);
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    printf("total %ld\n", sums[0] + sums[1]);
    printf("last to finish: worker %d\n", last_to_finish);
    return 0;
}
