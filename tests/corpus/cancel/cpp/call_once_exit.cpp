// Correct: the std::call_once callable ends its thread with pthread_exit on its first call
// (libstdc++'s call_once is pthread_once, whose unwinding resets the flag), so a later
// call_once on the same flag, by another thread, runs the callable again.
#include <cassert>
#include <mutex>
#include <pthread.h>
#include <thread>

static std::once_flag flag;
static int calls;

static void init() {
    if (++calls == 1)
        pthread_exit(nullptr);
}

int main() {
    std::thread t([] { std::call_once(flag, init); });
    t.join();
    std::thread u([] { std::call_once(flag, init); });
    u.join();
    assert(calls == 2);
    return 0;
}
