// 100 threads created before any is joined (issue 15's start records): when the creator
// keeps the turn, more of them are in creation at once than libpos has static start slots
// (64), and the rest of the records go through the heap.
// Usage: threads_in_creation 1  (each thread adds under a mutex: correct)
//        threads_in_creation 0  (read, yield, write back without it: a lost update)
#include <assert.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>

#define N 100

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static int counter;

static void *work(void *arg) {
    int locked = *(int *)arg;
    if (locked) {
        pthread_mutex_lock(&m);
        counter++;
        pthread_mutex_unlock(&m);
    } else {
        int v = counter;
        sched_yield();
        counter = v + 1;
    }
    return 0;
}

int main(int argc, char **argv) {
    int locked = argc > 1 ? atoi(argv[1]) : 1;
    pthread_t t[N];
    for (int i = 0; i < N; i++)
        pthread_create(&t[i], 0, work, &locked);
    for (int i = 0; i < N; i++)
        pthread_join(t[i], 0);
    assert(counter == N);
    return 0;
}
