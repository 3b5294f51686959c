/* Correct: a program that forks a worker process, both running OpenMP
 * regions at once (fork comes before any region: libgomp does not support a
 * parallel region in a child forked after the parent ran one). The child
 * inherits libpos's seccomp filter; its futex calls pass uncontrolled. */
#include <assert.h>
#include <omp.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>
static int region(void)
{
    int count = 0;
#pragma omp parallel num_threads(3)
    for (int i = 0; i < 4; i++) {
#pragma omp critical
        count++;
#pragma omp barrier
    }
    return count;
}
int main(void)
{
    pid_t pid = fork();
    if (pid == 0)
        _exit(region() == 12 ? 0 : 1);
    int status;
    assert(waitpid(pid, &status, 0) == pid);
    printf("child status %#x\n", status);
    assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    assert(region() == 12);
    return 0;
}
