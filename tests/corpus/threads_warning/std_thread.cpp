// Threads from libstdc++ only: std::thread and std::mutex (the program imports no pthread
// function itself). poscheck must not warn that nothing will be scheduled.
#include <cassert>
#include <mutex>
#include <thread>

static std::mutex m;
static int n;

int main() {
    std::thread a([] {
        std::lock_guard<std::mutex> g(m);
        n++;
    });
    std::thread b([] {
        std::lock_guard<std::mutex> g(m);
        n++;
    });
    a.join();
    b.join();
    assert(n == 2);
    return 0;
}
