// A C++ producer and consumer over a std::queue with a std::mutex and a
// std::condition_variable, built with g++ and clang++-14 -fsanitize=address: correct.
#include <condition_variable>
#include <memory>
#include <mutex>
#include <queue>
#include <thread>

int main() {
    std::mutex m;
    std::condition_variable cv;
    std::queue<std::unique_ptr<int>> q;
    bool done = false;
    long sum = 0;
    std::thread consumer([&] {
        std::unique_lock<std::mutex> l(m);
        for (;;) {
            cv.wait(l, [&] { return !q.empty() || done; });
            if (q.empty()) break;
            sum += *q.front();
            q.pop();
        }
    });
    for (int i = 1; i <= 3; i++) {
        std::lock_guard<std::mutex> g(m);
        q.push(std::make_unique<int>(i));
        cv.notify_one();
    }
    {
        std::lock_guard<std::mutex> g(m);
        done = true;
        cv.notify_one();
    }
    consumer.join();
    return sum == 6 ? 0 : 1;
}
