/* A raw clone(CLONE_VM | CLONE_THREAD | ... | CLONE_CHILD_CLEARTID) task next to a pthread;
 * main waits for the task's end on the cleared tid word with FUTEX_WAIT (probe 19). The task
 * runs uncontrolled and the kernel's wake at its exit does not reach the model: poscheck
 * says so instead of "creates no thread". */
#define _GNU_SOURCE
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>
static _Atomic int ctid = 1;
static char stack[65536] __attribute__((aligned(16)));
static int task(void *a) { (void)a; return 0; }
int main(void) {
    int flags = CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD |
                CLONE_SYSVSEM | CLONE_CHILD_CLEARTID;
    if (clone(task, stack + sizeof stack, flags, NULL, NULL, NULL, (int *)&ctid) <= 0)
        return 2;
    int v;
    while ((v = atomic_load(&ctid)) != 0)
        syscall(SYS_futex, &ctid, FUTEX_WAIT, v, NULL, NULL, NULL);
    puts("ok");
    return 0;
}
