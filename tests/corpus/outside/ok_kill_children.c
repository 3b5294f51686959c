/* Correct (GNU parallel's end): fork three children that sleep in a loop, then SIGKILL
 * each and reap it. Before 2026-11-28 libpos's reply to a killed child's connection raised
 * SIGPIPE in the parent: a `crash` in up to half the runs (probe 21). */
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int main(void) {
    pid_t kids[3];
    for (int i = 0; i < 3; i++) {
        kids[i] = fork();
        if (kids[i] < 0)
            return 2;
        if (kids[i] == 0) {
            struct timespec t = {0, 10 * 1000 * 1000};
            for (;;)
                nanosleep(&t, NULL);
        }
    }
    struct timespec t = {0, 30 * 1000 * 1000};
    nanosleep(&t, NULL);
    for (int i = 0; i < 3; i++) {
        int st;
        if (kill(kids[i], SIGKILL) != 0 || waitpid(kids[i], &st, 0) != kids[i])
            return 1;
        if (!WIFSIGNALED(st) || WTERMSIG(st) != SIGKILL)
            return 1;
    }
    return 0;
}
