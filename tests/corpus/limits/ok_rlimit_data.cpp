// A C++ program that limits its data segment (setrlimit(RLIMIT_DATA, 512 MiB)), then three
// std::threads fill vectors and count under a std::mutex. Correct. The limit reads back as
// set (before 2026-11-28 libpos's 16 GiB private heap counted as the program's data).
#include <sys/resource.h>
#include <cassert>
#include <cstdio>
#include <mutex>
#include <thread>
#include <vector>

int main() {
    rlimit r{512ul << 20, 512ul << 20};
    if (setrlimit(RLIMIT_DATA, &r) != 0) {
        std::perror("setrlimit");
        return 2;
    }
    std::mutex m;
    long total = 0;
    std::vector<std::thread> ts;
    for (int i = 0; i < 3; i++)
        ts.emplace_back([&] {
            std::vector<int> v(1 << 18, 1);
            long s = 0;
            for (int x : v) s += x;
            std::lock_guard<std::mutex> g(m);
            total += s;
        });
    for (auto &t : ts) t.join();
    rlimit g{};
    getrlimit(RLIMIT_DATA, &g);
    assert(g.rlim_cur == r.rlim_cur && g.rlim_max == r.rlim_max);
    assert(total == 3l << 18);
    return 0;
}
