// Buggy (C++): a worker pops from a queue another thread may already have emptied; the
// std::runtime_error it then throws is never caught, so std::terminate aborts. poscheck
// reports the abort with the exception's type and what().
#include <pthread.h>
#include <sched.h>
#include <stdexcept>
#include <vector>

static std::vector<int> queue{1};
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;

static int pop() {
    pthread_mutex_lock(&m);
    bool empty = queue.empty();
    pthread_mutex_unlock(&m);
    sched_yield(); // the check and the pop are not atomic
    if (empty)
        return -1;
    pthread_mutex_lock(&m);
    if (queue.empty()) {
        pthread_mutex_unlock(&m);
        throw std::runtime_error("pop from an empty queue");
    }
    int v = queue.back();
    queue.pop_back();
    pthread_mutex_unlock(&m);
    return v;
}

static void *worker(void *) {
    pop();
    return nullptr;
}

int main() {
    pthread_t a, b;
    pthread_create(&a, nullptr, worker, nullptr);
    pthread_create(&b, nullptr, worker, nullptr);
    pthread_join(a, nullptr);
    pthread_join(b, nullptr);
    return 0;
}
