// futures.cpp -- std::promise, std::async and std::packaged_task, one after the other.
//
// Each of them sets its shared state's value through std::call_once on a once flag that
// lives in the (heap-allocated) shared state, so a later future's flag often sits where a
// finished one was. Correct: every value arrives; nothing throws.
#include <cassert>
#include <future>
#include <thread>

int main()
{
    int sum = 0;
    for (int i = 1; i <= 3; i++) {
        std::promise<int> p;
        std::future<int> f = p.get_future();
        std::thread t([&p, i] { p.set_value(i); });
        sum += f.get();
        t.join();
    }
    for (int i = 1; i <= 2; i++) {
        std::future<int> f = std::async(std::launch::async, [i] { return 10 * i; });
        sum += f.get();
    }
    std::packaged_task<int(int)> task([](int x) { return x + 100; });
    std::future<int> f = task.get_future();
    std::thread t(std::move(task), 1);
    sum += f.get();
    t.join();
    assert(sum == 6 + 30 + 101);
    return 0;
}
