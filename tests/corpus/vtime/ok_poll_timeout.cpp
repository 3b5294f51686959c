// Correct: a std::thread polls a pipe with a timeout of SECONDS (argv[1], default 3) that
// nothing writes to; main joins it. poll must return 0 after >= SECONDS of steady_clock. The
// wait is in the kernel, outside control, while nothing else can run (before 2026-11-28 a
// hang after the step timeout).
#include <poll.h>
#include <unistd.h>
#include <cassert>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>
int main(int argc, char **argv) {
    int secs = argc > 1 ? std::atoi(argv[1]) : 3;
    int p[2];
    assert(pipe(p) == 0);
    std::thread t([&] {
        auto start = std::chrono::steady_clock::now();
        pollfd f{p[0], POLLIN, 0};
        assert(poll(&f, 1, secs * 1000) == 0);
        assert(std::chrono::steady_clock::now() - start >= std::chrono::seconds(secs));
    });
    t.join();
    std::puts("ok");
}
