/* OpenMP's view of its CPUs under control: omp_get_num_procs (which asks for the affinity
 * mask when called) and the default team size report what they report natively (`print`
 * prints the first), and the team counts its members correctly in a critical section. */
#include <assert.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
    if (argc > 1 && strcmp(argv[1], "print") == 0) {
        printf("%d\n", omp_get_num_procs());
        return 0;
    }
    int n = argc > 1 ? atoi(argv[1]) : 1;
    assert(omp_get_num_procs() == n);
    assert(omp_get_max_threads() == n);
    int total = 0, team = 0;
#pragma omp parallel
    {
        assert(omp_get_num_procs() == n);
#pragma omp critical
        total++;
#pragma omp single
        team = omp_get_num_threads();
    }
    assert(team == n && total == n);
    return 0;
}
