/* Correct: an OpenMP parallel loop whose iterations each compute for a while (no
 * synchronisation call inside), a reduction, then a critical section and a barrier.
 * argv[1]: rounds per iteration in millions (default 100), argv[2]: iterations (default 2). */
#include <assert.h>
#include <omp.h>
#include <stdint.h>
#include <stdlib.h>

static uint64_t crunch(uint64_t x, long millions) {
    for (long i = 0; i < millions * 1000000L; i++) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        __asm__ volatile("" : "+r"(x));
    }
    return x;
}

int main(int argc, char **argv) {
    long rounds = argc > 1 ? atol(argv[1]) : 100;
    int iters = argc > 2 ? atoi(argv[2]) : 2;
    uint64_t sum = 0;
    int visits = 0;
#pragma omp parallel num_threads(2)
    {
#pragma omp for reduction(+ : sum) schedule(static)
        for (int i = 0; i < iters; i++) sum += crunch((uint64_t)i + 1, rounds) | 1;
#pragma omp critical
        visits++;
#pragma omp barrier
    }
    assert(visits == 2 && sum != 0);
    return 0;
}
