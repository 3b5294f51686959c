/* A program that dies in the middle of a run in ways libpos cannot report: SIGKILL to
 * itself ("kill") or a raw exit_group system call ("exit"), both only on the schedules
 * where the worker ran between the main thread's two critical sections. The run decided in
 * the program then sends no end message: its schedule must come from the run's journal. */
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static int x;

static void *worker(void *a) {
    for (int i = 0; i < 2; i++) {
        pthread_mutex_lock(&m);
        x = x * 2 + 1;
        pthread_mutex_unlock(&m);
    }
    return a;
}

int main(int argc, char **argv) {
    const char *how = argc > 1 ? argv[1] : "kill";
    pthread_t t;
    pthread_create(&t, 0, worker, 0);
    pthread_mutex_lock(&m);
    x = x * 3;
    pthread_mutex_unlock(&m);
    pthread_mutex_lock(&m);
    int seen = x;
    pthread_mutex_unlock(&m);
    if (seen != 0 && seen % 3 == 0) {
        if (strcmp(how, "kill") == 0)
            kill(getpid(), SIGKILL);
        else
            syscall(SYS_exit_group, 7);
    }
    pthread_join(t, 0);
    return 0;
}
