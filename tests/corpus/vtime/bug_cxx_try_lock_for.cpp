// Buggy C++: lock-order deadlock between a std::mutex and a std::timed_mutex whose
// try_lock_for(5s) is asserted to succeed; only the timeout breaks the deadlock.
#include <cassert>
#include <chrono>
#include <mutex>
#include <thread>

using namespace std::chrono_literals;

static std::timed_mutex a;
static std::mutex b;

int main() {
    std::thread t([] {
        std::lock_guard<std::mutex> g(b);
        bool got = a.try_lock_for(5s);
        assert(got && "5 s is plenty");
        a.unlock();
    });
    {
        std::lock_guard<std::timed_mutex> g(a);
        std::lock_guard<std::mutex> h(b);
    }
    t.join();
    return 0;
}
