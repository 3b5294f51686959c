// Correct C++: std::timed_mutex::try_lock_for (5 s) behind a short critical section,
// condition_variable::wait_for polling and wait_until with a predicate, sleep_for ordering.
#include <cassert>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

using namespace std::chrono_literals;

static std::timed_mutex tm;
static std::mutex m;
static std::condition_variable cv;
static bool ready = false;
static int count = 0;

int main() {
    std::thread worker([] {
        for (int i = 0; i < 3; i++) {
            bool got = tm.try_lock_for(5s);
            assert(got);
            count++;
            tm.unlock();
        }
        std::this_thread::sleep_for(20ms);
        {
            std::lock_guard<std::mutex> g(m);
            ready = true;
        }
        cv.notify_one();
    });
    for (int i = 0; i < 3; i++) {
        bool got = tm.try_lock_for(5s);
        assert(got);
        count++;
        tm.unlock();
    }
    {
        std::unique_lock<std::mutex> l(m);
        while (!ready) cv.wait_for(l, 5ms);
    }
    {
        std::unique_lock<std::mutex> l(m);
        bool ok = cv.wait_until(l, std::chrono::steady_clock::now() + 5s, [] { return ready; });
        assert(ok);
    }
    worker.join();
    assert(count == 6);
    return 0;
}
