// C++'s view of its CPUs under control: std::thread::hardware_concurrency and
// sched_getaffinity report what they report natively (`print` prints the affinity count),
// and a pool of that many std::threads counts correctly under a std::mutex.
#include <cassert>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <sched.h>
#include <thread>
#include <vector>

static int affinity_count() {
    cpu_set_t s;
    CPU_ZERO(&s);
    assert(sched_getaffinity(0, sizeof s, &s) == 0);
    return CPU_COUNT(&s);
}

int main(int argc, char **argv) {
    if (argc > 1 && std::strcmp(argv[1], "print") == 0) {
        std::printf("%d\n", affinity_count());
        return 0;
    }
    int n = argc > 1 ? std::atoi(argv[1]) : 1;
    assert(affinity_count() == n);
    std::mutex m;
    int total = 0;
    std::vector<std::thread> pool;
    for (int i = 0; i < n; i++)
        pool.emplace_back([&] {
            assert(affinity_count() == n);
            std::lock_guard<std::mutex> g(m);
            total++;
        });
    for (auto &t : pool) t.join();
    assert(total == n);
    return 0;
}
