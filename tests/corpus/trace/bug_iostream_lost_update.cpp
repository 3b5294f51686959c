// A lost update between two threads that read and write a counter in two locked sections,
// in a program that uses iostreams: its saved schedule must replay under `replay --trace`.
// libstdc++'s locale set-up calls `pthread_once` only when the process has threads, and
// before 2026-11-29 a trace replay (over the socket, no libpos thread) saw the process as
// single-threaded where the run had not: it diverged at step 1.
#include <cassert>
#include <iostream>
#include <mutex>
#include <thread>

static std::mutex m;
static int n;

static void work() {
    for (int i = 0; i < 3; i++) {
        int v;
        {
            std::lock_guard<std::mutex> g(m);
            v = n;
        }
        {
            std::lock_guard<std::mutex> g(m);
            n = v + 1; // BUG: the other thread may have written between the two sections
        }
    }
}

int main() {
    std::thread t(work);
    work();
    t.join();
    std::cout << "n = " << n << std::endl;
    assert(n == 6);
    return 0;
}
