/* Threads from OpenMP (libgomp creates them; the program imports GOMP_parallel): no
   warning. */
#include <stdio.h>

int main(void) {
    int n = 0;
#pragma omp parallel num_threads(2)
    {
#pragma omp critical
        n++;
    }
    printf("%d\n", n > 0);
    return 0;
}
