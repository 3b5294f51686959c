// Correct: a C++ heartbeat thread paced by a periodic timerfd (5 ms) counts beats until the
// main thread, which sleeps 22 ms with std::this_thread::sleep_for, asks it to stop; the beat
// count must agree with the steady clock (at least 4 beats in 22 ms, at most one per 5 ms).
#include <sys/timerfd.h>
#include <unistd.h>

#include <atomic>
#include <cassert>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <thread>

int main() {
    int fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
    assert(fd >= 0);
    std::atomic<bool> stop{false};
    std::mutex m;
    uint64_t beats = 0;
    auto t0 = std::chrono::steady_clock::now();
    std::thread heart([&] {
        itimerspec its{{0, 5000000}, {0, 5000000}};
        assert(timerfd_settime(fd, 0, &its, nullptr) == 0);
        while (!stop.load()) {
            uint64_t n = 0;
            assert(read(fd, &n, sizeof n) == sizeof n && n >= 1);
            std::lock_guard<std::mutex> g(m);
            beats += n;
        }
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(22));
    stop.store(true);
    heart.join();
    auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                  std::chrono::steady_clock::now() - t0)
                  .count();
    assert(beats >= 4);
    assert(beats <= static_cast<uint64_t>(ms / 5));
    close(fd);
    return 0;
}
