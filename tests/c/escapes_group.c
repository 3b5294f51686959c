/*
 * escapes_group.c -- a run leaves a process behind that has left its process group, as a
 * program that starts a daemon does.
 *
 * Usage: `escapes_group HOW PIDFILE` with HOW one of exec_sleep (a child calls setsid and
 *   execs `sleep 1000`) or double_fork (a grandchild calls setsid and waits in pause()
 *   forever; its parent exits). The escaped process appends its pid to PIDFILE before it
 *   tells the program it is ready; the program then exits 0 with it still alive.
 * Expected: under poscheck, after the runs, no pid in PIDFILE is alive: the process is
 *   killed with its run (the fork server is the reaper of orphans; a spawned run's
 *   descendants are found by their environment). Pthread-call points suffice.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void *worker(void *arg)
{
    return arg;
}

/* In the escaped process: leave the group, record our pid, say we are ready. */
static void escaped(const char *pidfile, int ready)
{
    setsid();
    char line[32];
    int fd = open(pidfile, O_WRONLY | O_APPEND | O_CREAT, 0644);
    int n = snprintf(line, sizeof line, "%d\n", (int)getpid());
    if (fd < 0 || write(fd, line, n) != n)
        _exit(3);
    close(fd);
    if (write(ready, "x", 1) != 1)
        _exit(3);
    close(ready);
}

int main(int argc, char **argv)
{
    if (argc != 3)
        return 2;
    pthread_t t;
    pthread_create(&t, NULL, worker, NULL);
    pthread_join(t, NULL);
    int p[2];
    if (pipe(p) != 0)
        return 2;
    pid_t c = fork();
    if (c == 0) {
        close(p[0]);
        if (strcmp(argv[1], "exec_sleep") == 0) {
            escaped(argv[2], p[1]);
            execlp("sleep", "sleep", "1000", (char *)NULL);
            _exit(4);
        }
        if (fork() == 0) {
            escaped(argv[2], p[1]);
            for (;;)
                pause();
        }
        _exit(0);
    }
    close(p[1]);
    char b;
    if (read(p[0], &b, 1) != 1)
        return 5;
    if (strcmp(argv[1], "double_fork") == 0)
        waitpid(c, NULL, 0);
    return 0;
}
