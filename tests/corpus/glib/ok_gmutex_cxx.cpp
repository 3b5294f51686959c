// Correct: C++ code on GLib's primitives (an RAII guard over GMutex, std::thread workers, a
// GCond latch): workers add into a shared vector under the mutex, the last one to finish
// wakes main, which waits in a predicate loop.
#include <glib.h>
#include <cassert>
#include <thread>
#include <vector>

namespace {
struct Guard {
    explicit Guard(GMutex *m) : m_(m) { g_mutex_lock(m_); }
    ~Guard() { g_mutex_unlock(m_); }
    GMutex *m_;
};

GMutex m;
GCond done_cond;
std::vector<int> items;
int running = 3;
}  // namespace

int main() {
    std::vector<std::thread> workers;
    for (int w = 0; w < 3; w++)
        workers.emplace_back([w] {
            for (int i = 0; i < 2; i++) {
                Guard g(&m);
                items.push_back(w * 10 + i);
            }
            Guard g(&m);
            if (--running == 0)
                g_cond_broadcast(&done_cond);
        });
    {
        Guard g(&m);
        while (running > 0)
            g_cond_wait(&done_cond, &m);
        assert(items.size() == 6);
    }
    for (auto &t : workers)
        t.join();
    return 0;
}
