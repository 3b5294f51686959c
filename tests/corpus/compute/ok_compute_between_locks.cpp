// Correct: std::thread workers each compute a chunk with no synchronisation call, then add
// it to a shared result under a std::mutex; main waits on a std::condition_variable until all
// are in (it is blocked in the model while they compute), then joins.
// argv[1]: rounds per chunk in millions (default 100), argv[2]: workers (1-4, default 2).
#include <cassert>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <vector>

namespace {
std::mutex m;
std::condition_variable all_in;
std::uint64_t total = 0;
int done = 0;

std::uint64_t crunch(std::uint64_t x, long millions) {
    for (long i = 0; i < millions * 1000000L; i++) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        __asm__ volatile("" : "+r"(x));
    }
    return x;
}
}  // namespace

int main(int argc, char **argv) {
    long rounds = argc > 1 ? std::atol(argv[1]) : 100;
    int n = argc > 2 ? std::atoi(argv[2]) : 2;
    if (n < 1 || n > 4) return 2;
    std::vector<std::thread> workers;
    for (int i = 0; i < n; i++) {
        workers.emplace_back([i, rounds] {
            std::uint64_t h = crunch(static_cast<std::uint64_t>(i) + 1, rounds);
            std::lock_guard<std::mutex> g(m);
            total += h | 1;
            done++;
            all_in.notify_one();
        });
    }
    {
        std::unique_lock<std::mutex> l(m);
        all_in.wait(l, [n] { return done == n; });
    }
    for (auto &w : workers) w.join();
    assert(done == n && total != 0);
    return 0;
}
