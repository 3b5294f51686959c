/* Correct: parent and forked child hand work over through two process-shared semaphores in
 * MAP_SHARED memory (sem_init(s, 1, 0)): the parent posts a request, the child answers it,
 * three times; a worker thread of the parent counts meanwhile. Before, the model kept the
 * child's semaphore apart from the parent's: a deadlock in every run. */
#include <assert.h>
#include <pthread.h>
#include <semaphore.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

struct shm {
    sem_t req, ans;
    int value;
};

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static int count;

static void *worker(void *arg) {
    (void)arg;
    for (int i = 0; i < 3; i++) {
        pthread_mutex_lock(&m);
        count++;
        pthread_mutex_unlock(&m);
    }
    return 0;
}

int main(void) {
    struct shm *s = mmap(0, sizeof *s, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    assert(s != MAP_FAILED);
    sem_init(&s->req, 1, 0);
    sem_init(&s->ans, 1, 0);
    pthread_t w;
    pthread_create(&w, 0, worker, 0);
    pid_t c = fork();
    if (c == 0) {
        for (int i = 0; i < 3; i++) {
            sem_wait(&s->req);
            s->value = s->value * 2 + 1;
            sem_post(&s->ans);
        }
        _exit(0);
    }
    for (int i = 0; i < 3; i++) {
        sem_post(&s->req);
        sem_wait(&s->ans);
    }
    assert(s->value == 7);
    int st;
    assert(waitpid(c, &st, 0) == c && WIFEXITED(st) && WEXITSTATUS(st) == 0);
    pthread_join(w, 0);
    assert(count == 3);
    return 0;
}
