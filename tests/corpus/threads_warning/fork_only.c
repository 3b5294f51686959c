/* No thread, but a forked child that posts a process-shared semaphore the parent waits on:
 * libpos schedules both processes (a child that never posted would be a deadlock), so no
 * "creates no thread" warning. */
#include <assert.h>
#include <semaphore.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

int main(void) {
    sem_t *s = mmap(0, sizeof *s, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    assert(s != MAP_FAILED);
    sem_init(s, 1, 0);
    pid_t c = fork();
    assert(c >= 0);
    if (c == 0) {
        sem_post(s);
        _exit(0);
    }
    sem_wait(s);
    int status;
    assert(waitpid(c, &status, 0) == c && WIFEXITED(status) && WEXITSTATUS(status) == 0);
    return 0;
}
