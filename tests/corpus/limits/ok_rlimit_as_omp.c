/* An OpenMP program that limits its own address space (setrlimit(RLIMIT_AS, 512 MiB))
 * before its first parallel region, then sums in parallel with a critical section and a
 * reduction. Correct (before 2026-11-28 libgomp could not start its threads under poscheck:
 * libpos's own reservations were charged to the program). */
#include <assert.h>
#include <omp.h>
#include <stdio.h>
#include <sys/resource.h>

int main(void) {
    struct rlimit r = {512 << 20, 512 << 20};
    if (setrlimit(RLIMIT_AS, &r) != 0) {
        perror("setrlimit");
        return 2;
    }
    long total = 0, sum = 0;
#pragma omp parallel num_threads(3) reduction(+ : sum)
    {
        for (int i = 0; i < 100; i++)
            sum += i;
#pragma omp critical
        total += 1;
    }
    assert(total == 3 && sum == 3 * 4950);
    return 0;
}
