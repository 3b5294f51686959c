/* Correct: recursive Fibonacci with tasks and taskwait, started by one thread. */
#include <assert.h>
#include <omp.h>
#include <stdio.h>

static int fib(int n)
{
    if (n < 2)
        return n;
    int a, b;
#pragma omp task shared(a)
    a = fib(n - 1);
#pragma omp task shared(b)
    b = fib(n - 2);
#pragma omp taskwait
    return a + b;
}

int main(void)
{
    int r = 0;
#pragma omp parallel
#pragma omp single
    r = fib(7);
    assert(r == 13);
    printf("fib(7) = %d\n", r);
    return 0;
}
