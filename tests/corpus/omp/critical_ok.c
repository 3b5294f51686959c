/* Correct: a shared counter and a histogram updated by every thread, each
 * update inside "#pragma omp critical". */
#include <assert.h>
#include <omp.h>
#include <stdio.h>

int main(void)
{
    long total = 0;
    int hist[4] = {0};
#pragma omp parallel for
    for (int i = 0; i < 12; i++) {
#pragma omp critical
        {
            total += i;
            hist[i % 4]++;
        }
    }
    assert(total == 66);
    for (int b = 0; b < 4; b++)
        assert(hist[b] == 3);
    printf("total %ld\n", total);
    return 0;
}
