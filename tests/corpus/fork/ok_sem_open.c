/* Correct: a named semaphore (sem_open) posted by a forked child and waited for by the
 * parent (probe 15: a deadlock in every run before). */
#include <assert.h>
#include <fcntl.h>
#include <semaphore.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

int main(void) {
    char name[64];
    snprintf(name, sizeof name, "/poscheck_ok_sem_open_%d", (int)getpid());
    sem_t *s = sem_open(name, O_CREAT | O_EXCL, 0600, 0);
    assert(s != SEM_FAILED);
    sem_unlink(name);
    pid_t c = fork();
    if (c == 0) {
        sem_post(s);
        _exit(0);
    }
    assert(sem_wait(s) == 0);
    assert(waitpid(c, 0, 0) == c);
    sem_close(s);
    return 0;
}
