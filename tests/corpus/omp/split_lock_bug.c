/* Buggy: as split_critical_bug.c with an OpenMP lock (omp_set_lock/omp_unset_lock) taken
 * twice per thread: the read and the write are in separate sections, an update is lost.
 * Before 2026-11-27 the lock operations were no scheduling points (uncontended: an inline
 * atomic) and the bug was never found. */
#include <assert.h>
#include <omp.h>

int main(void)
{
    int counter = 0;
    omp_lock_t l;
    omp_init_lock(&l);
#pragma omp parallel num_threads(2)
    {
        omp_set_lock(&l);
        int v = counter;
        omp_unset_lock(&l);
        omp_set_lock(&l);
        counter = v + 1;
        omp_unset_lock(&l);
    }
    omp_destroy_lock(&l);
    assert(counter == 2);
    return 0;
}
