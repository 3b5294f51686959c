/* An OpenMP team sized by the CPUs the program sees (no OMP_NUM_THREADS: libgomp counts the
 * affinity mask), each member adding one to a total in two critical sections, the read and
 * the write apart: a lost update, so the final check fails in some schedules. It needs a
 * team of two or more: if the program saw the one CPU poscheck keeps the run on, the team
 * would be one thread and the bug out of reach. `print` prints the team size. */
#include <assert.h>
#include <omp.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv) {
    if (argc > 1 && strcmp(argv[1], "print") == 0) {
        printf("%d\n", omp_get_max_threads());
        return 0;
    }
    int total = 0, team = 0;
#pragma omp parallel
    {
        int seen;
#pragma omp critical(total)
        seen = total;
#pragma omp critical(total)
        total = seen + 1;
#pragma omp single
        team = omp_get_num_threads();
    }
    assert(team >= 2);
    assert(total == team);
    return 0;
}
