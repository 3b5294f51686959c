/* Correct: a parallel-for reduction, then a barrier-separated phase where one
 * thread (single) publishes a value and the master thread prints. */
#include <assert.h>
#include <omp.h>
#include <stdio.h>

int main(void)
{
    long sum = 0;
#pragma omp parallel for reduction(+ : sum)
    for (int i = 1; i <= 30; i++)
        sum += i;
    assert(sum == 465);

    int shared_value = 0;
    int seen[8] = {0};
#pragma omp parallel
    {
#pragma omp single
        shared_value = 42;
        /* implicit barrier after single */
        int me = omp_get_thread_num();
        if (me < 8)
            seen[me] = shared_value;
#pragma omp barrier
#pragma omp master
        {
            for (int t = 0; t < omp_get_num_threads() && t < 8; t++)
                assert(seen[t] == 42);
            printf("sum %ld, all threads saw %d\n", sum, shared_value);
        }
    }
    return 0;
}
