/* Correct: a writer thread sends numbers over a pipe to a reader thread, which sums them.
 * The reader blocks in read() (outside libpos's control) until the writer writes; both also
 * take a mutex, so the run has scheduling points around the blocking. Never a bug. */
#include <assert.h>
#include <pthread.h>
#include <unistd.h>

#define N 5

static int fds[2];
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static int sent, received;

static void *writer(void *arg) {
    for (int i = 1; i <= N; i++) {
        pthread_mutex_lock(&m);
        sent += i;
        pthread_mutex_unlock(&m);
        if (write(fds[1], &i, sizeof i) != sizeof i) return NULL;
    }
    close(fds[1]);
    return arg;
}

static void *reader(void *arg) {
    int v;
    while (read(fds[0], &v, sizeof v) == sizeof v) {
        pthread_mutex_lock(&m);
        received += v;
        pthread_mutex_unlock(&m);
    }
    return arg;
}

int main(void) {
    if (pipe(fds) != 0) return 5;
    pthread_t r, w;
    pthread_create(&r, NULL, reader, NULL);
    pthread_create(&w, NULL, writer, NULL);
    pthread_join(w, NULL);
    pthread_join(r, NULL);
    assert(sent == N * (N + 1) / 2);
    assert(received == sent);
    return 0;
}
