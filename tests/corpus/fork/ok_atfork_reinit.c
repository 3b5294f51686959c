/* Correct: library-style fork safety with re-initialisation, the common variant of the
 * pthread_atfork protocol. The prepare handler takes the library's mutex, rwlock and
 * spinlock; the parent handler releases them; the child handler re-initialises them
 * (pthread_mutex_init, pthread_rwlock_init, pthread_spin_init) instead of unlocking. A
 * worker uses the three in the parent meanwhile; the child runs a thread that uses them
 * too. Before 2026-11-28 the model still held the locks in the child: a false deadlock in
 * every run. */
#include <pthread.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
static pthread_spinlock_t spin;
static int counter, table, stats;

static void prepare(void) {
    pthread_mutex_lock(&m);
    pthread_rwlock_wrlock(&rw);
    pthread_spin_lock(&spin);
}

static void parent(void) {
    pthread_spin_unlock(&spin);
    pthread_rwlock_unlock(&rw);
    pthread_mutex_unlock(&m);
}

static void child(void) {
    pthread_mutex_init(&m, NULL);
    pthread_rwlock_init(&rw, NULL);
    pthread_spin_init(&spin, PTHREAD_PROCESS_PRIVATE);
}

static void *worker(void *arg) {
    for (int i = 0; i < 2; i++) {
        pthread_mutex_lock(&m);
        counter++;
        pthread_mutex_unlock(&m);
        pthread_rwlock_wrlock(&rw);
        table++;
        pthread_rwlock_unlock(&rw);
        pthread_spin_lock(&spin);
        stats++;
        pthread_spin_unlock(&spin);
    }
    return arg;
}

int main(void) {
    pthread_spin_init(&spin, PTHREAD_PROCESS_PRIVATE);
    pthread_atfork(prepare, parent, child);
    pthread_t t;
    pthread_create(&t, NULL, worker, NULL);
    pid_t c = fork();
    if (c == 0) {
        pthread_t u;
        pthread_create(&u, NULL, worker, NULL);
        pthread_join(u, NULL);
        _exit(counter >= 2 && table >= 2 && stats >= 2 ? 0 : 1);
    }
    int st = 0;
    if (c < 0 || waitpid(c, &st, 0) != c) {
        perror("fork/waitpid");
        return 2;
    }
    pthread_join(t, NULL);
    return WIFEXITED(st) && WEXITSTATUS(st) == 0 && counter == 2 ? 0 : 1;
}
