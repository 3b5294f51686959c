/* Buggy: the program assumes thread 0 reaches the critical section first;
 * only some schedules do that. */
#include <assert.h>
#include <omp.h>
#include <stdio.h>

int main(void)
{
    int order[8];
    int next = 0;
#pragma omp parallel num_threads(3)
    {
#pragma omp critical
        order[next++] = omp_get_thread_num();
    }
    printf("first in: thread %d\n", order[0]);
    assert(order[0] == 0);
    return 0;
}
