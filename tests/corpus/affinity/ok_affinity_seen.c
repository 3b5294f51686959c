/* What a program sees of its CPUs under control: poscheck keeps each run on one CPU, but
 * sched_getaffinity, pthread_getaffinity_np and a child's `nproc` (system, popen) must report
 * the CPUs the program was started with. `./ok_affinity_seen print` prints that count (run
 * natively by the test); `./ok_affinity_seen N` asserts it, on main and on two threads that
 * also update a counter under a mutex. */
#define _GNU_SOURCE
#include <assert.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int expected;
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static int counter;

static int seen_by_sched(void) {
    cpu_set_t s;
    CPU_ZERO(&s);
    assert(sched_getaffinity(0, sizeof s, &s) == 0);
    return CPU_COUNT(&s);
}

static int seen_by_pthread(void) {
    cpu_set_t s;
    CPU_ZERO(&s);
    assert(pthread_getaffinity_np(pthread_self(), sizeof s, &s) == 0);
    return CPU_COUNT(&s);
}

static void *worker(void *arg) {
    assert(seen_by_sched() == expected);
    pthread_mutex_lock(&m);
    counter++;
    pthread_mutex_unlock(&m);
    assert(seen_by_pthread() == expected);
    return arg;
}

int main(int argc, char **argv) {
    if (argc > 1 && strcmp(argv[1], "print") == 0) {
        printf("%d\n", seen_by_sched());
        return 0;
    }
    expected = argc > 1 ? atoi(argv[1]) : 1;
    assert(seen_by_sched() == expected && seen_by_pthread() == expected);
    /* A child started through popen and one through system see the same CPUs. */
    FILE *p = popen("nproc", "r");
    assert(p);
    int n = 0;
    assert(fscanf(p, "%d", &n) == 1);
    assert(pclose(p) == 0);
    assert(n == expected);
    char cmd[64];
    snprintf(cmd, sizeof cmd, "test \"$(nproc)\" = %d", expected);
    assert(system(cmd) == 0);
    pthread_t t[2];
    for (int i = 0; i < 2; i++) pthread_create(&t[i], 0, worker, 0);
    for (int i = 0; i < 2; i++) pthread_join(t[i], 0);
    assert(counter == 2);
    return 0;
}
