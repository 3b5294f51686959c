/* A program that uses ptrace itself (an anti-debugging check): under the ptrace backend it
 * cannot (a process has one tracer), which must be a clear error, not a verdict. */
#include <pthread.h>
#include <stdio.h>
#include <sys/ptrace.h>

static void *worker(void *arg) { return arg; }

int main(void) {
    pthread_t t;
    pthread_create(&t, NULL, worker, NULL);
    pthread_join(t, NULL);
    if (ptrace(PTRACE_TRACEME, 0, NULL, NULL) == -1) {
        puts("traced");
        return 3;
    }
    return 0;
}
