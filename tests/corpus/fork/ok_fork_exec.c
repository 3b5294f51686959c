/* Correct: a thread counts under a mutex while main forks two children that exec: one
 * /bin/true, one this program again with the argument "child" (which exits 5); main waits
 * for both and checks their statuses. The exec'd images run uncontrolled (said once).
 * Never a bug. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static int counter;

static void *worker(void *arg) {
    for (int i = 0; i < 3; i++) {
        pthread_mutex_lock(&m);
        counter++;
        pthread_mutex_unlock(&m);
    }
    return arg;
}

static pid_t spawn(const char *path, char *const argv[]) {
    pid_t c = fork();
    if (c == 0) {
        execv(path, argv);
        _exit(127);
    }
    return c;
}

int main(int argc, char **argv) {
    if (argc > 1 && strcmp(argv[1], "child") == 0)
        return 5;
    pthread_t t;
    pthread_create(&t, NULL, worker, NULL);
    char *true_argv[] = {"true", NULL};
    char *self_argv[] = {argv[0], "child", NULL};
    pid_t a = spawn("/bin/true", true_argv);
    pid_t b = spawn("/proc/self/exe", self_argv);
    int sa = -1, sb = -1;
    if (a < 0 || b < 0 || waitpid(b, &sb, 0) != b || waitpid(a, &sa, 0) != a) {
        perror("fork/waitpid");
        return 2;
    }
    pthread_join(t, NULL);
    if (!WIFEXITED(sa) || WEXITSTATUS(sa) != 0 || !WIFEXITED(sb) || WEXITSTATUS(sb) != 5) {
        fprintf(stderr, "statuses %#x %#x\n", sa, sb);
        return 3;
    }
    return counter == 3 ? 0 : 1;
}
