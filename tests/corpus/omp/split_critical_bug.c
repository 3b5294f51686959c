/* Buggy: each thread reads the counter in one critical section and writes it back in a
 * second one: between them another thread can do the same, and an update is lost. Before
 * 2026-11-27 critical sections were no scheduling points (libgomp takes an uncontended one
 * with an inline atomic): a thread's two sections ran as one block and the bug was never
 * found, with or without memory points. */
#include <assert.h>
#include <omp.h>

int main(void)
{
    int counter = 0;
#pragma omp parallel num_threads(2)
    {
        int v;
#pragma omp critical
        v = counter;
#pragma omp critical
        counter = v + 1;
    }
    assert(counter == 2);
    return 0;
}
