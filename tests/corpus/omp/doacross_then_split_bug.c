/* Buggy: a correct doacross loop, then, in the same parallel region, a total updated in two
 * critical sections (read in one, write in the next): the other thread's update can fall
 * between them and be lost (an assertion). The threads set aside in the doacross wait come
 * back under control at their next critical section, where the bug is found. */
#include <assert.h>
#include <omp.h>
#include <stdio.h>
int main(void) {
    enum { N = 40 };
    int log[N], n = 0, total = 0;
#pragma omp parallel num_threads(2)
    {
#pragma omp for ordered(1) schedule(static, 1)
        for (int i = 0; i < N; i++) {
#pragma omp ordered depend(sink: i - 1)
            log[n++] = i;
#pragma omp ordered depend(source)
        }
        int seen;
#pragma omp critical
        seen = total;
#pragma omp critical
        total = seen + 1; /* BUG: the update is split over two critical sections */
    }
    assert(total == 2);
    for (int i = 0; i < N; i++)
        assert(log[i] == i);
    puts("ok");
    return 0;
}
