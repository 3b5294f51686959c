/* Correct: an OpenMP program that runs other programs: system() and
 * posix_spawn() of /bin/sh and /bin/echo after a parallel region, and itself
 * again (an OpenMP image at the same addresses) with "child", once with its
 * environment and once with an empty one (libpos is then not preloaded unless
 * it puts itself back). The exec'd images inherit libpos's seccomp filter and
 * must not be killed by it. */
#include <assert.h>
#include <omp.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>

extern char **environ;

static int child(void)
{
    int count = 0;
#pragma omp parallel num_threads(3)
    for (int i = 0; i < 4; i++) {
#pragma omp critical
        count++;
#pragma omp barrier
    }
    return count == 12 ? 0 : 1;
}

int main(int argc, char **argv)
{
    if (argc > 1)
        return child();
    int count = 0;
#pragma omp parallel
    {
#pragma omp critical
        count++;
    }
    assert(count >= 1);
    assert(system("/bin/echo from system") == 0);
    pid_t pid;
    char *sh[] = {"/bin/sh", "-c", "/bin/echo from spawn; /bin/true", NULL};
    assert(posix_spawn(&pid, "/bin/sh", NULL, NULL, sh, environ) == 0);
    int status;
    assert(waitpid(pid, &status, 0) == pid);
    assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    char *self[] = {argv[0], "child", NULL};
    assert(posix_spawn(&pid, argv[0], NULL, NULL, self, environ) == 0);
    assert(waitpid(pid, &status, 0) == pid);
    assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    char *empty[] = {NULL};
    assert(posix_spawn(&pid, argv[0], NULL, NULL, self, empty) == 0);
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
