// Correct: a std::jthread consumer waits on a std::condition_variable_any with its
// stop_token; main queues work, waits until it is handled, then asks the consumer to stop
// (the jthread destructor joins).
#include <cassert>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

static std::mutex m;
static std::condition_variable_any cv, done;
static std::deque<int> work;
static int handled;

int main() {
    {
        std::jthread consumer([](std::stop_token st) {
            std::unique_lock<std::mutex> lock(m);
            while (true) {
                if (!cv.wait(lock, st, [] { return !work.empty(); }))
                    return; // stop requested and nothing left to do
                work.pop_front();
                handled++;
                done.notify_one();
            }
        });
        for (int i = 0; i < 3; i++) {
            {
                std::lock_guard<std::mutex> g(m);
                work.push_back(i);
            }
            cv.notify_one();
            std::this_thread::yield();
        }
        {
            std::unique_lock<std::mutex> lock(m);
            done.wait(lock, [] { return handled == 3; });
        }
        consumer.request_stop();
    }
    assert(handled == 3);
    return 0;
}
