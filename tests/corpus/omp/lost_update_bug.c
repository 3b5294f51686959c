/* Buggy: every thread adds to a shared counter without critical; the
 * read-modify-write is split by a yield, so an update can be lost. */
#include <assert.h>
#include <omp.h>
#include <sched.h>
#include <stdio.h>

int main(void)
{
    int counter = 0;
    int n = 0;
#pragma omp parallel
    {
#pragma omp single
        n = omp_get_num_threads();
        int seen = counter;
        sched_yield();
        counter = seen + 1;
    }
    printf("counter %d of %d\n", counter, n);
    assert(counter == n);
    return 0;
}
