/* Buggy: main forks while another thread may hold a mutex. The child's copy of the mutex
 * is then held by a thread the child does not have, so the child blocks for ever in
 * pthread_mutex_lock, and the parent for ever in waitpid: a deadlock across processes. */
#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static int counter;

static void *worker(void *arg) {
    pthread_mutex_lock(&m);
    counter++;
    pthread_mutex_unlock(&m);
    return arg;
}

int main(void) {
    pthread_t t;
    pthread_create(&t, NULL, worker, NULL);
    pid_t c = fork();
    if (c == 0) {
        pthread_mutex_lock(&m);
        counter++;
        pthread_mutex_unlock(&m);
        _exit(0);
    }
    int st = 0;
    waitpid(c, &st, 0);
    pthread_join(t, NULL);
    return 0;
}
