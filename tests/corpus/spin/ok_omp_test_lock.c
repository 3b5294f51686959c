/* Correct: OpenMP threads take an omp_lock_t by polling omp_test_lock (no yield) and add to
 * a shared total under it. Under PCT the poller once starved the holder (step limit in 8 of
 * 50 runs). */
#include <assert.h>
#include <omp.h>

int main(void) {
    omp_lock_t l;
    omp_init_lock(&l);
    long total = 0;
#pragma omp parallel num_threads(3)
    {
        for (int k = 0; k < 10; k++) {
            while (!omp_test_lock(&l)) {
            }
            total += k;
            omp_unset_lock(&l);
        }
    }
    omp_destroy_lock(&l);
    assert(total == 3 * 45);
    return 0;
}
