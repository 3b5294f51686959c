// A process-shared robust mutex in MAP_SHARED memory: the forked child locks it and exits
// holding it; a thread of the parent, locking it meanwhile, goes first or waits for the
// child's end and gets it with EOWNERDEAD. Either way the parent recovers the mutex once,
// with pthread_mutex_consistent, and the count adds up.
#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

struct shared {
    pthread_mutex_t m;
    int value;
};

static struct shared *s;
static int recovered;  // the parent's thread got EOWNERDEAD

static void *locker(void *arg) {
    (void)arg;
    int r = pthread_mutex_lock(&s->m);
    recovered = r == EOWNERDEAD;
    if (recovered) {
        assert(s->value == 10);  // the child went first and died holding it
        r = pthread_mutex_consistent(&s->m);
    }
    assert(r == 0);
    s->value += 1;
    pthread_mutex_unlock(&s->m);
    return NULL;
}

int main(void) {
    s = mmap(NULL, sizeof *s, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    assert(s != MAP_FAILED);
    pthread_mutexattr_t a;
    pthread_mutexattr_init(&a);
    pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
    pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
    pthread_mutex_init(&s->m, &a);
    s->value = 0;
    pid_t pid = fork();
    assert(pid >= 0);
    if (pid == 0) {
        int r = pthread_mutex_lock(&s->m);
        assert(r == 0);  // the parent recovers or unlocks it before it waits for us
        s->value += 10;
        _exit(0);  // holding s->m
    }
    pthread_t t;
    pthread_create(&t, NULL, locker, NULL);
    pthread_join(t, NULL);
    int st;
    assert(waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0);
    int r = pthread_mutex_lock(&s->m);
    // Unless recovered already, the child exited holding the mutex after our unlock.
    assert(r == (recovered ? 0 : EOWNERDEAD));
    if (r == EOWNERDEAD)
        r = pthread_mutex_consistent(&s->m);
    assert(r == 0);
    assert(s->value == 11);
    pthread_mutex_unlock(&s->m);
    assert(pthread_mutex_trylock(&s->m) == 0);
    pthread_mutex_unlock(&s->m);
    printf("value %d\n", s->value);
    return 0;
}
