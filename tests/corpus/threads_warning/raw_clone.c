/* A raw clone(CLONE_VM | CLONE_THREAD | ... | CLONE_CHILD_CLEARTID) task next to a pthread;
 * main waits for the task's end on the cleared tid word with FUTEX_WAIT (probe 19), and the
 * two threads count under a mutex. Correct: poscheck warns that the task runs uncontrolled
 * and leaves the wait for its exit to the kernel (before 2026-11-28: a false deadlock in
 * most runs, the kernel's wake at the task's exit never reaching the model). */
#define _GNU_SOURCE
#include <assert.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>
static _Atomic int ctid = 1;
static char stack[65536] __attribute__((aligned(16)));
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static int count;
static int task(void *a) { (void)a; return 0; }
static void add(void) {
    pthread_mutex_lock(&m);
    count++;
    pthread_mutex_unlock(&m);
}
static void *worker(void *a) {
    add();
    add();
    return a;
}
int main(void) {
    pthread_t t;
    pthread_create(&t, NULL, worker, NULL);
    int flags = CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD |
                CLONE_SYSVSEM | CLONE_CHILD_CLEARTID;
    if (clone(task, stack + sizeof stack, flags, NULL, NULL, NULL, (int *)&ctid) <= 0)
        return 2;
    int v;
    while ((v = atomic_load(&ctid)) != 0)
        syscall(SYS_futex, &ctid, FUTEX_WAIT, v, NULL, NULL, NULL);
    add();
    pthread_join(t, NULL);
    assert(count == 3);
    puts("ok");
    return 0;
}
