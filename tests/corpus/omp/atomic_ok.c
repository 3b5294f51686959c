/* Correct: hits counted with "omp atomic", a maximum kept with "omp critical". */
#include <assert.h>
#include <omp.h>
#include <stdio.h>

int main(void)
{
    int hits = 0;
    int best = -1;
#pragma omp parallel for schedule(dynamic, 2)
    for (int i = 0; i < 16; i++) {
        int v = (i * 7) % 16;
#pragma omp atomic
        hits++;
#pragma omp critical(maxv)
        if (v > best)
            best = v;
    }
    assert(hits == 16);
    assert(best == 15);
    printf("hits %d best %d\n", hits, best);
    return 0;
}
