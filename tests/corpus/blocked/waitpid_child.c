/* Correct: a thread forks a child process that exits after a short sleep, and waits for it
 * in waitpid() while another thread counts under a mutex. Never a bug. (The child and the
 * wait were outside libpos's control before forks were modelled; now the child is
 * controlled and the wait is a scheduling point.) */
#include <assert.h>
#include <pthread.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static int count;

static void *waiter(void *arg) {
    pid_t pid = fork();
    if (pid == 0) {
        /* The child: a sleep, then exit. */
        struct timespec ts = {0, 80 * 1000 * 1000};
        while (nanosleep(&ts, &ts) != 0) {
        }
        _exit(7);
    }
    assert(pid > 0);
    int status = 0;
    pid_t r;
    do {
        r = waitpid(pid, &status, 0);
    } while (r < 0);
    assert(r == pid && WIFEXITED(status) && WEXITSTATUS(status) == 7);
    pthread_mutex_lock(&m);
    count += 10;
    pthread_mutex_unlock(&m);
    return arg;
}

static void *counter(void *arg) {
    for (int i = 0; i < 3; i++) {
        pthread_mutex_lock(&m);
        count++;
        pthread_mutex_unlock(&m);
    }
    return arg;
}

int main(void) {
    pthread_t a, b;
    pthread_create(&a, NULL, waiter, NULL);
    pthread_create(&b, NULL, counter, NULL);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    assert(count == 13);
    return 0;
}
