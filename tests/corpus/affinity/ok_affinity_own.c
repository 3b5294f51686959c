/* A program that chooses its own CPUs: it pins a thread to the first CPU it was given and
 * reads its mask back, as it set it; the pin poscheck puts in place does not get in the way.
 * With `pinned N` it also checks that poscheck did pin the run (the kernel's view, in
 * /proc/thread-self/status, lists one CPU while the program's calls report N); with
 * `free N` that the run was left free (--no-pin). */
#define _GNU_SOURCE
#include <assert.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static int first = -1, counter;

/* CPUs in the kernel's Cpus_allowed_list of the calling thread ("0-1", "0,2-3", "1"). */
static int kernel_cpus(void) {
    FILE *f = fopen("/proc/thread-self/status", "r");
    assert(f);
    char line[512];
    int n = -1;
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "Cpus_allowed_list:", 18) != 0) continue;
        n = 0;
        for (char *s = line + 18; *s;) {
            while (*s == ' ' || *s == '\t' || *s == ',') s++;
            if (*s < '0' || *s > '9') break;
            long a = strtol(s, &s, 10), b = a;
            if (*s == '-') b = strtol(s + 1, &s, 10);
            n += (int)(b - a + 1);
        }
    }
    fclose(f);
    return n;
}

static void *chooser(void *arg) {
    cpu_set_t s;
    CPU_ZERO(&s);
    CPU_SET(first, &s);
    assert(pthread_setaffinity_np(pthread_self(), sizeof s, &s) == 0);
    CPU_ZERO(&s);
    assert(sched_getaffinity(0, sizeof s, &s) == 0);
    assert(CPU_COUNT(&s) == 1 && CPU_ISSET(first, &s));
    pthread_mutex_lock(&m);
    counter++;
    pthread_mutex_unlock(&m);
    return arg;
}

int main(int argc, char **argv) {
    cpu_set_t s;
    CPU_ZERO(&s);
    assert(sched_getaffinity(0, sizeof s, &s) == 0);
    if (argc > 2) {
        int n = atoi(argv[2]);
        assert(CPU_COUNT(&s) == n);
        int kernel = kernel_cpus();
        if (strcmp(argv[1], "pinned") == 0) assert(kernel == 1);
        else assert(kernel == n);
    }
    for (int c = 0; c < CPU_SETSIZE && first < 0; c++)
        if (CPU_ISSET(c, &s)) first = c;
    pthread_t t;
    pthread_create(&t, 0, chooser, 0);
    pthread_mutex_lock(&m);
    counter++;
    pthread_mutex_unlock(&m);
    pthread_join(t, 0);
    assert(counter == 2);
    return 0;
}
