/* Buggy: the parent stops its worker with SIGTERM, but the worker ignores SIGTERM and stays
 * blocked in sem_wait on a task semaphore nobody posts; the parent's waitpid waits for
 * ever. Trigger: every run (a real deadlock between the two processes). */
#include <semaphore.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int main(void) {
    sem_t *tasks = mmap(NULL, sizeof *tasks, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
                        -1, 0);
    if (tasks == MAP_FAILED || sem_init(tasks, 1, 0) != 0)
        return 2;
    pid_t worker = fork();
    if (worker < 0)
        return 2;
    if (worker == 0) {
        signal(SIGTERM, SIG_IGN);
        sem_wait(tasks);
        _exit(3);
    }
    struct timespec t = {0, 20 * 1000 * 1000};
    nanosleep(&t, NULL);
    kill(worker, SIGTERM);
    int st;
    waitpid(worker, &st, 0);
    return 0;
}
