/* Correct: a doacross loop (`ordered(1)`, `depend(sink: i-1)` / `depend(source)`) over 300
 * iterations on 2 threads, scheduled one iteration at a time: each appends its index to a
 * log, which must come out in order. libgomp's sink wait spins on memory; libpos sets the
 * waiting thread aside at once (probe 19: a hang in a third of the runs before, each hand-
 * over waiting a quarter of the step timeout for the spin to be noticed). */
#include <omp.h>
#include <stdio.h>
int main(void) {
    enum { N = 300 };
    int log[N], n = 0;
#pragma omp parallel for ordered(1) num_threads(2) schedule(static, 1)
    for (int i = 0; i < N; i++) {
#pragma omp ordered depend(sink: i - 1)
        log[n++] = i;
#pragma omp ordered depend(source)
    }
    for (int i = 0; i < N; i++)
        if (log[i] != i)
            return 1;
    puts("ok");
    return 0;
}
