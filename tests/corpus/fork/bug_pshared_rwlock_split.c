/* Buggy: as ok_pshared_barrier_rwlock.c, but the child writes the pair in two write-locked
 * sections; the parent's read section can fall between them and see x != y (an assertion
 * in the parent). Needs the rwlock to be one object in both processes. */
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
        pthread_rwlock_wrlock(&s->l);
        s->x = 1;
        pthread_rwlock_unlock(&s->l);
        pthread_rwlock_wrlock(&s->l); /* BUG: the pair is not updated in one section */
        s->y = 1;
        pthread_rwlock_unlock(&s->l);
        _exit(0);
    }
    pthread_barrier_wait(&s->b);
    pthread_rwlock_rdlock(&s->l);
    int x = s->x, y = s->y;
    pthread_rwlock_unlock(&s->l);
    assert(x == y);
    int st;
    assert(waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0);
    puts("ok");
    return 0;
}
