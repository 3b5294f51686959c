/* Correct: a process-shared mutex and condition variable in MAP_SHARED memory; the forked
 * child sets a value and signals, the parent waits for it (probe 15: a deadlock in every
 * run before, the child's objects kept apart from the parent's). */
#include <pthread.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include <stdio.h>
#include <assert.h>
struct shm { pthread_mutex_t mu; pthread_cond_t cv; int ready; int value; };
int main(void) {
    struct shm *s = mmap(NULL, sizeof *s, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    assert(s != MAP_FAILED);
    pthread_mutexattr_t ma; pthread_condattr_t ca;
    pthread_mutexattr_init(&ma); pthread_mutexattr_setpshared(&ma, PTHREAD_PROCESS_SHARED);
    pthread_condattr_init(&ca); pthread_condattr_setpshared(&ca, PTHREAD_PROCESS_SHARED);
    pthread_mutex_init(&s->mu, &ma);
    pthread_cond_init(&s->cv, &ca);
    s->ready = 0;
    pid_t pid = fork();
    assert(pid >= 0);
    if (pid == 0) {
        usleep(10000);
        pthread_mutex_lock(&s->mu);
        s->value = 77; s->ready = 1;
        pthread_cond_signal(&s->cv);
        pthread_mutex_unlock(&s->mu);
        _exit(0);
    }
    pthread_mutex_lock(&s->mu);
    while (!s->ready) pthread_cond_wait(&s->cv, &s->mu);
    assert(s->value == 77);
    pthread_mutex_unlock(&s->mu);
    int st;
    assert(waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0);
    puts("pshared cond ok");
    return 0;
}
