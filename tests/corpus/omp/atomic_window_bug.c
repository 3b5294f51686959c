/* Buggy: each thread reads the total with `atomic read`, logs in a named critical section,
 * then writes the total back with `atomic write`: an update made in between is lost. The
 * saved schedule of odpor's first buggy execution stopped after 4 steps (the team's futex
 * wait was posted only at its turn, after the wake that woke it) and did not replay. */
#include <assert.h>
#include <omp.h>

int main(void)
{
    int acc = 0, logn = 0;
#pragma omp parallel num_threads(2) shared(acc, logn)
    {
        for (int i = 0; i < 3; i++) {
            int v;
#pragma omp atomic read
            v = acc;
#pragma omp critical(logc)
            logn++;
#pragma omp atomic write
            acc = v + 1;
        }
    }
    assert(logn == 6);
    assert(acc == 6);
    return 0;
}
