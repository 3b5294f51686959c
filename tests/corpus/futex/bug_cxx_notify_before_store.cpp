// Buggy: the producer notifies, then publishes (notify_one before store). A consumer that saw
// 0 and reaches its futex wait after the notify sleeps for ever: libstdc++'s wait compares
// the word once more in the kernel, but the word still holds 0 then. Deadlock at the join.
#include <atomic>
#include <cstdio>
#include <thread>

int main() {
    std::atomic<int> ready{0};
    int data = 0;
    std::thread producer([&] {
        data = 42;
        ready.notify_one();
        ready.store(1);
    });
    std::thread consumer([&] {
        while (ready.load() == 0)
            ready.wait(0);
        std::printf("%d\n", data);
    });
    producer.join();
    consumer.join();
    return 0;
}
