/* raw_clone.c with main's increment split into two lock sections (read, then write): the
 * worker's increments between them are lost. The bug needs the worker to run between main's
 * two sections, after main's wait for the raw task's exit (left to the kernel). */
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
    pthread_mutex_lock(&m);
    int seen = count;
    pthread_mutex_unlock(&m);
    pthread_mutex_lock(&m); /* BUG: the read and the write are two sections */
    count = seen + 1;
    pthread_mutex_unlock(&m);
    pthread_join(t, NULL);
    assert(count == 3);
    puts("ok");
    return 0;
}
