/* Correct (Python multiprocessing.Pool.terminate()): a worker process blocks in sem_wait on
 * a process-shared task semaphore that nobody posts; the parent ends it with SIGTERM and
 * reaps it. Before 2026-11-28 the parent's waitpid met the worker still counted as blocked
 * in sem_wait: a false `deadlock` in most runs (probe 21). */
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
        sem_wait(tasks);
        _exit(3);
    }
    struct timespec t = {0, 20 * 1000 * 1000};
    nanosleep(&t, NULL);
    int st;
    if (kill(worker, SIGTERM) != 0 || waitpid(worker, &st, 0) != worker)
        return 1;
    return WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM ? 0 : 1;
}
