/* Bug: the parent waits for two answers on a process-shared semaphore, but the forked child
 * posts only one: the parent waits for ever. Still a deadlock when the child's semaphore is
 * the parent's own in the model. */
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
    if (c == 0) {
        sem_post(s);
        _exit(0);
    }
    sem_wait(s);
    sem_wait(s);
    waitpid(c, 0, 0);
    return 0;
}
