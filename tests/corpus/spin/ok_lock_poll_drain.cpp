// Correct: main queues 30 items for 3 consumers, then waits for the queue to drain by
// polling it under the mutex (no yield, no condition variable). PCT once kept main at the
// top priority while the consumers waited for the mutex: step limit in 2 of 50 runs. A
// thousand lock-unlock pairs in a row with only reads inside now count as a spin.
#include <atomic>
#include <cassert>
#include <condition_variable>
#include <mutex>
#include <queue>
#include <thread>
#include <vector>

int main() {
    std::mutex m;
    std::condition_variable cv;
    std::queue<int> q;
    bool done = false;
    std::atomic<long> sum{0};
    std::vector<std::thread> ws;
    for (int i = 0; i < 3; i++)
        ws.emplace_back([&] {
            std::unique_lock<std::mutex> lk(m);
            for (;;) {
                cv.wait(lk, [&] { return done || !q.empty(); });
                if (q.empty())
                    return;
                int v = q.front();
                q.pop();
                lk.unlock();
                sum += v;
                lk.lock();
            }
        });
    for (int i = 1; i <= 30; i++) {
        {
            std::lock_guard<std::mutex> g(m);
            q.push(i);
        }
        cv.notify_one();
    }
    for (;;) {
        std::lock_guard<std::mutex> g(m);
        if (q.empty())
            break;
    }
    {
        std::lock_guard<std::mutex> g(m);
        done = true;
    }
    cv.notify_all();
    for (auto &w : ws)
        w.join();
    assert(sum == 465);
    return 0;
}
