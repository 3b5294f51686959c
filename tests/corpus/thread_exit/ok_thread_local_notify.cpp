// Correct: each detached worker's thread_local guard deregisters the thread in its
// destructor; main waits until all have. Before 2026-11-27 thread_local destructors ran
// after the thread's exit in the model, uncontrolled: a deadlock in most runs.
#include <cassert>
#include <condition_variable>
#include <mutex>
#include <thread>

static std::mutex m;
static std::condition_variable cv;
static int alive = 0, done = 0;

struct Guard {
    bool on = false;
    ~Guard() {
        if (on) {
            std::lock_guard<std::mutex> l(m);
            alive--;
            cv.notify_all();
        }
    }
};
thread_local Guard guard;

int main() {
    for (int i = 0; i < 2; i++) {
        {
            std::lock_guard<std::mutex> l(m);
            alive++;
        }
        std::thread([] {
            guard.on = true;
            std::lock_guard<std::mutex> l(m);
            done++;
        }).detach();
    }
    std::unique_lock<std::mutex> l(m);
    cv.wait(l, [] { return alive == 0; });
    assert(done == 2);
}
