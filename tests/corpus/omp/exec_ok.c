/* Correct: an OpenMP program that runs other programs: system() and
 * posix_spawn() of /bin/sh and /bin/echo after a parallel region. The exec'd
 * images inherit libpos's seccomp filter and must not be killed by it. */
#include <assert.h>
#include <omp.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>

extern char **environ;

int main(void)
{
    int count = 0;
#pragma omp parallel
    {
#pragma omp critical
        count++;
    }
    assert(count >= 1);
    assert(system("/bin/echo from system") == 0);
    pid_t pid;
    char *argv[] = {"/bin/sh", "-c", "/bin/echo from spawn; /bin/true", NULL};
    assert(posix_spawn(&pid, "/bin/sh", NULL, NULL, argv, environ) == 0);
    int status;
    assert(waitpid(pid, &status, 0) == pid);
    assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
#pragma omp parallel
    {
#pragma omp critical
        count++;
    }
    printf("count %d\n", count);
    return 0;
}
