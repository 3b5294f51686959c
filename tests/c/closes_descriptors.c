/*
 * closes_descriptors.c -- a program closes every descriptor above stderr, as daemons and
 * fork-exec helpers do, then uses threads.
 *
 * Usage: `closes_descriptors HOW` with HOW one of close_range (the glibc function),
 *   sys_close_range (`syscall(SYS_close_range, 3, ~0U, 0)`), closefrom, close_loop
 *   (`close(fd)` for fd 3..65535), sys_close_loop (`syscall(SYS_close, fd)`), dup2_over
 *   (`dup2(0, fd)` then `close(fd)` for fd 3..4095).
 * Expected: exit 0 under poscheck with every transport: libpos's own descriptors (the run's
 *   connection, its journal) survive, so every run ends `ok` (before the fix, the raw
 *   `syscall` route closed them and every run was an error). Pthread-call points suffice.
 */
#define _GNU_SOURCE
#include <assert.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static int count;

static void *worker(void *arg)
{
    (void)arg;
    for (int i = 0; i < 3; i++) {
        pthread_mutex_lock(&m);
        count++;
        pthread_mutex_unlock(&m);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    const char *how = argc > 1 ? argv[1] : "";
    if (strcmp(how, "close_range") == 0)
        close_range(3, ~0U, 0);
    else if (strcmp(how, "sys_close_range") == 0)
        syscall(SYS_close_range, 3, ~0U, 0);
    else if (strcmp(how, "closefrom") == 0)
        closefrom(3);
    else if (strcmp(how, "close_loop") == 0)
        for (int fd = 3; fd < 65536; fd++)
            close(fd);
    else if (strcmp(how, "sys_close_loop") == 0)
        for (int fd = 3; fd < 65536; fd++)
            syscall(SYS_close, fd);
    else if (strcmp(how, "dup2_over") == 0)
        for (int fd = 3; fd < 4096; fd++)
            if (dup2(0, fd) == fd)
                close(fd);
    else
        return 2;
    pthread_t t[3];
    for (int i = 0; i < 3; i++)
        pthread_create(&t[i], NULL, worker, NULL);
    for (int i = 0; i < 3; i++)
        pthread_join(t[i], NULL);
    assert(count == 9);
    return 0;
}
