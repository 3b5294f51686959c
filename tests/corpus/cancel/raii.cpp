// Correct (C++): a worker blocked in pthread_cond_wait holds the mutex through an RAII
// guard; cancellation unwinds the thread (forced unwind) and the guard's destructor
// unlocks. Main can lock afterwards, and join returns PTHREAD_CANCELED. Never a bug.
#include <cassert>
#include <pthread.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t c = PTHREAD_COND_INITIALIZER;
static bool ready;
static int destroyed;

struct Guard {
    pthread_mutex_t *mu;
    explicit Guard(pthread_mutex_t *x) : mu(x) { pthread_mutex_lock(mu); }
    ~Guard() {
        destroyed++;
        pthread_mutex_unlock(mu);
    }
};

static void *worker(void *) {
    Guard g(&m);
    while (!ready)
        pthread_cond_wait(&c, &m);
    return nullptr;
}

int main() {
    pthread_t t;
    void *ret;
    pthread_create(&t, nullptr, worker, nullptr);
    pthread_cancel(t);
    pthread_join(t, &ret);
    assert(ret == PTHREAD_CANCELED);
    assert(destroyed == 1);
    pthread_mutex_lock(&m);
    pthread_mutex_unlock(&m);
    return 0;
}
