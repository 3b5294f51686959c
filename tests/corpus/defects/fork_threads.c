/* Correct: the parent forks a child that creates two threads (controlled in the same run,
 * as p1.t0.1 and p1.t0.2), waits for it, then runs its own two threads; and then it execs
 * /bin/true with argument "x" through execv in a second child (the image runs uncontrolled:
 * said once). */
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

static int two_threads(void) {
    pthread_t a, b;
    pthread_create(&a, NULL, worker, NULL);
    pthread_create(&b, NULL, worker, NULL);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    return counter;
}

int main(void) {
    pid_t c = fork();
    if (c == 0)
        _exit(two_threads() == 2 ? 0 : 1);
    int st = 0;
    if (c < 0 || waitpid(c, &st, 0) != c || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
        return 2;
    pid_t e = fork();
    if (e == 0) {
        char *argv[] = {"true", "x", NULL};
        execv("/bin/true", argv);
        _exit(3);
    }
    if (e < 0 || waitpid(e, &st, 0) != e || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
        return 4;
    return two_threads() == 2 ? 0 : 1;
}
