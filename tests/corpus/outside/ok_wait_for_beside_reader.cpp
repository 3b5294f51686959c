// Correct (a Python-style reader thread): a reader blocks in read() on a pipe, outside
// poscheck's control, until main writes to it at the end; meanwhile main waits for a result
// that never comes with std::condition_variable::wait_for, three times 20 ms, and goes on
// after the timeouts. Before 2026-11-28: a `hang` in every run (probe 21).
#include <cassert>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <unistd.h>

int main() {
    int p[2];
    if (pipe(p) != 0)
        return 2;
    std::thread reader([&] {
        char c = 0;
        assert(read(p[0], &c, 1) == 1 && c == 'q');
    });
    std::mutex m;
    std::condition_variable cv;
    bool result = false;
    int timeouts = 0;
    {
        std::unique_lock<std::mutex> l(m);
        for (int i = 0; i < 3; i++)
            if (!cv.wait_for(l, std::chrono::milliseconds(20), [&] { return result; }))
                timeouts++;
    }
    assert(timeouts == 3);
    assert(write(p[1], "q", 1) == 1);
    reader.join();
    return 0;
}
