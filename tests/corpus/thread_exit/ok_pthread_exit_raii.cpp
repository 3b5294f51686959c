// Correct: pthread_exit unwinds through a std::lock_guard, whose destructor unlocks the
// mutex. Before 2026-11-27 the unwind ran after the thread's exit in the model,
// uncontrolled: a deadlock in every run.
#include <cassert>
#include <mutex>
#include <pthread.h>

static std::mutex m;
static int state = 0;

static void *worker(void *) {
    std::lock_guard<std::mutex> g(m);
    state = 1;
    pthread_exit(nullptr);
}

int main() {
    pthread_t t;
    pthread_create(&t, nullptr, worker, nullptr);
    {
        std::lock_guard<std::mutex> g(m);
    }
    pthread_join(t, nullptr);
    std::lock_guard<std::mutex> g(m);
    assert(state == 1);
}
