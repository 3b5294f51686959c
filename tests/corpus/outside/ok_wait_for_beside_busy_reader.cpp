// Correct: a std::thread computes for a while (no synchronisation call), then blocks in a
// read of a pipe until main writes to it at the end; meanwhile main polls a
// std::condition_variable with wait_for, three times 20 ms, for a flag nobody sets. The
// reader is set aside while it computes and is asleep in `read` later. Before 2026-11-28: a
// `hang` in every run. argv[1]: the computation in millions of rounds (default 200).
#include <unistd.h>

#include <cassert>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <thread>

int main(int argc, char **argv) {
    long rounds = argc > 1 ? std::atol(argv[1]) : 200;
    int fds[2];
    if (pipe(fds) != 0) return 2;
    std::thread reader([&] {
        std::uint64_t x = 1;
        for (long i = 0; i < rounds * 1000000L; i++) {
            x = x * 6364136223846793005ULL + 1442695040888963407ULL;
            __asm__ volatile("" : "+r"(x));
        }
        char b = 0;
        ssize_t n = read(fds[0], &b, 1);
        assert(n == 1 && b == 'q');
        (void)n;
    });
    std::mutex m;
    std::condition_variable cv;
    bool flag = false;
    int timeouts = 0;
    {
        std::unique_lock<std::mutex> l(m);
        for (int i = 0; i < 3; i++) {
            if (!cv.wait_for(l, std::chrono::milliseconds(20), [&] { return flag; })) timeouts++;
        }
    }
    assert(timeouts == 3);
    if (write(fds[1], "q", 1) != 1) return 3;
    reader.join();
    return 0;
}
