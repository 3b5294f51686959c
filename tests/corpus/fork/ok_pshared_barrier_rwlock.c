/* Correct: a process-shared barrier and rwlock in MAP_SHARED memory. Parent and forked child
 * meet at the barrier twice; between the meetings the child writes a pair under the write
 * lock and the parent reads it under the read lock, always consistent (probe 19: a
 * deadlock in every run before, the barrier kept apart per process, 1 of 2 arrived in
 * each). */
#include <assert.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
struct shm { pthread_barrier_t b; pthread_rwlock_t l; int x, y; };
int main(void) {
    struct shm *s = mmap(NULL, sizeof *s, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    assert(s != MAP_FAILED);
    pthread_barrierattr_t ba; pthread_rwlockattr_t ra;
    pthread_barrierattr_init(&ba); pthread_barrierattr_setpshared(&ba, PTHREAD_PROCESS_SHARED);
    pthread_rwlockattr_init(&ra); pthread_rwlockattr_setpshared(&ra, PTHREAD_PROCESS_SHARED);
    assert(pthread_barrier_init(&s->b, &ba, 2) == 0);
    assert(pthread_rwlock_init(&s->l, &ra) == 0);
    pid_t pid = fork();
    assert(pid >= 0);
    if (pid == 0) {
        pthread_barrier_wait(&s->b);
        for (int i = 1; i <= 3; i++) {
            pthread_rwlock_wrlock(&s->l);
            s->x = i; s->y = i;
            pthread_rwlock_unlock(&s->l);
        }
        pthread_barrier_wait(&s->b);
        _exit(0);
    }
    pthread_barrier_wait(&s->b);
    for (int i = 0; i < 3; i++) {
        pthread_rwlock_rdlock(&s->l);
        assert(s->x == s->y);
        pthread_rwlock_unlock(&s->l);
    }
    pthread_barrier_wait(&s->b);
    assert(s->x == 3 && s->y == 3);
    int st;
    assert(waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0);
    puts("ok");
    return 0;
}
