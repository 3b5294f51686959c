/* Correct: a program with its own inline-syscall futex code runs itself again
 * with an EMPTY environment (posix_spawn, and fork + execve). The new image
 * maps its code at the same addresses (ASLR is off under control), inherits
 * libpos's seccomp filter, and would be killed by SIGSYS at its first raw
 * futex call if libpos did not put itself back into the image's LD_PRELOAD. */
#include <assert.h>
#include <linux/futex.h>
#include <pthread.h>
#include <spawn.h>
#include <stdatomic.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static atomic_int word;

static long raw_futex(atomic_int *addr, int op, int val)
{
    long ret;
    register long r10 __asm__("r10") = 0;
    __asm__ volatile("syscall"
                     : "=a"(ret)
                     : "0"((long)SYS_futex), "D"(addr), "S"((long)op), "d"((long)val), "r"(r10)
                     : "rcx", "r11", "memory");
    return ret;
}

static void *waker(void *arg)
{
    (void)arg;
    raw_futex(&word, FUTEX_WAKE_PRIVATE, 1);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc > 1) /* the child image: one raw futex call from this program's code */
        return raw_futex(&word, FUTEX_WAKE_PRIVATE, 1) == 0 ? 0 : 3;
    pthread_t t;
    pthread_create(&t, NULL, waker, NULL);
    pthread_join(t, NULL);
    char *self[] = {argv[0], "child", NULL};
    char *empty[] = {NULL};
    pid_t pid;
    int status;
    assert(posix_spawn(&pid, argv[0], NULL, NULL, self, empty) == 0);
    assert(waitpid(pid, &status, 0) == pid);
    assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    pid = fork();
    if (pid == 0) {
        execve(argv[0], self, empty);
        _exit(4);
    }
    assert(waitpid(pid, &status, 0) == pid);
    assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    return 0;
}
