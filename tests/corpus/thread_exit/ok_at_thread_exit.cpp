// Correct: std::notify_all_at_thread_exit, promise::set_value_at_thread_exit and
// packaged_task::make_ready_at_thread_exit make results ready when their thread ends.
// Before 2026-11-27 that happened after the thread's exit in the model, uncontrolled: a
// deadlock in every run.
#include <cassert>
#include <condition_variable>
#include <future>
#include <mutex>
#include <thread>

static std::mutex m;
static std::condition_variable cv;
static bool ready = false;
static int result = 0;

int main() {
    std::thread([] {
        std::unique_lock<std::mutex> l(m);
        result = 42;
        ready = true;
        std::notify_all_at_thread_exit(cv, std::move(l));
    }).detach();
    {
        std::unique_lock<std::mutex> l(m);
        cv.wait(l, [] { return ready; });
        assert(result == 42);
    }
    std::promise<int> p;
    auto f = p.get_future();
    std::thread t([&p] { p.set_value_at_thread_exit(9); });
    assert(f.get() == 9);
    t.join();
    std::packaged_task<int()> task([] { return 5; });
    auto f2 = task.get_future();
    std::thread t2([&task] { task.make_ready_at_thread_exit(); });
    assert(f2.get() == 5);
    t2.join();
}
