/* Bug: main waits 5 ms on a System V semaphore for a worker that posts it only after a
 * 20 ms sleep, and assumes it got it: the wait always times out first. The kernel's timeout
 * is followed by a sleep in virtual time, which must not hide it. */
#define _GNU_SOURCE
#include <assert.h>
#include <pthread.h>
#include <sys/ipc.h>
#include <sys/sem.h>
#include <unistd.h>

static int id;

static void *worker(void *arg) {
    (void)arg;
    usleep(20000);
    struct sembuf up = {0, 1, 0};
    semop(id, &up, 1);
    return NULL;
}

int main(void) {
    id = semget(IPC_PRIVATE, 1, IPC_CREAT | 0600);
    if (id < 0)
        return 2;
    pthread_t t;
    pthread_create(&t, NULL, worker, NULL);
    struct sembuf down = {0, -1, 0};
    struct timespec five = {0, 5000000};
    int r = semtimedop(id, &down, 1, &five);
    pthread_join(t, NULL);
    semctl(id, 0, IPC_RMID);
    assert(r == 0 && "the worker's post came in time");
    return 0;
}
