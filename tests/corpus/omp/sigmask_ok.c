/* Correct: an OpenMP program that blocks every signal in its threads (as
 * servers do before starting workers) and installs its own SIGSYS handler;
 * libgomp's futex calls must keep working. */
#include <assert.h>
#include <omp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

static void on_sigsys(int sig)
{
    (void)sig;
    abort();
}

int main(void)
{
    signal(SIGSYS, on_sigsys);
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, NULL);
    int total = 0;
#pragma omp parallel
    {
        sigset_t mine;
        sigfillset(&mine);
        pthread_sigmask(SIG_SETMASK, &mine, NULL);
        for (int i = 0; i < 3; i++) {
#pragma omp critical
            total++;
#pragma omp barrier
        }
    }
    assert(total == 3 * omp_get_max_threads());
    printf("total %d\n", total);
    return 0;
}
