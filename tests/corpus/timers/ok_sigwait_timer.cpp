// Correct: the signal-handling thread of a service, as C++ programs write it: SIGALRM is
// blocked before any thread starts, one thread takes it with sigwait, and a periodic
// interval timer makes it tick; workers wait on a condition variable for the ticks.
#include <pthread.h>
#include <signal.h>
#include <sys/time.h>

#include <cassert>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

static std::mutex m;
static std::condition_variable cv;
static int ticks;

static void signal_thread(sigset_t set) {
    for (int i = 0; i < 3; i++) {
        int sig = 0;
        int r = sigwait(&set, &sig);
        assert(r == 0 && sig == SIGALRM);
        std::lock_guard<std::mutex> g(m);
        ticks++;
        cv.notify_all();
    }
    itimerval off{};
    setitimer(ITIMER_REAL, &off, nullptr);
}

int main() {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGALRM);
    pthread_sigmask(SIG_BLOCK, &set, nullptr);
    std::thread s(signal_thread, set);
    std::vector<std::thread> workers;
    for (int w = 0; w < 2; w++)
        workers.emplace_back([] {
            std::unique_lock<std::mutex> l(m);
            cv.wait(l, [] { return ticks >= 3; });
        });
    itimerval it{{0, 20000}, {0, 20000}};
    assert(setitimer(ITIMER_REAL, &it, nullptr) == 0);
    for (auto &w : workers) w.join();
    s.join();
    std::lock_guard<std::mutex> g(m);
    assert(ticks == 3);
    return 0;
}
