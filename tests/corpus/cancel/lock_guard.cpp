// Correct (C++): a worker holds a std::mutex through std::lock_guard while it waits in
// sem_wait (a cancellation point); pthread_cancel unwinds it (forced unwind) and the
// guard's destructor unlocks. Main then locks the mutex, and join returns PTHREAD_CANCELED.
#include <cassert>
#include <mutex>
#include <pthread.h>
#include <semaphore.h>

static std::mutex m;
static sem_t holding, never;
static int shared;

static void *worker(void *) {
    std::lock_guard<std::mutex> g(m);
    shared = 1;
    sem_post(&holding);
    sem_wait(&never);
    shared = 2;
    return nullptr;
}

int main() {
    pthread_t t;
    void *ret;
    sem_init(&holding, 0, 0);
    sem_init(&never, 0, 0);
    pthread_create(&t, nullptr, worker, nullptr);
    sem_wait(&holding);
    pthread_cancel(t);
    pthread_join(t, &ret);
    assert(ret == PTHREAD_CANCELED);
    std::lock_guard<std::mutex> g(m);
    assert(shared == 1);
    return 0;
}
