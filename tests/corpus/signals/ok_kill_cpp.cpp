// Correct: std::thread workers wait on a std::condition_variable; main asks each of them,
// through pthread_kill on its native handle, to report, and waits for the handlers' posts
// (sem_post is async-signal-safe) before it lets them finish.
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>

#include <atomic>
#include <cassert>
#include <cerrno>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

static sem_t reported;
static std::atomic<int> reports{0};

extern "C" void on_report(int) {
    reports.fetch_add(1);
    sem_post(&reported);
}

int main() {
    struct sigaction sa = {};
    sa.sa_handler = on_report;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGUSR1, &sa, nullptr);
    sem_init(&reported, 0, 0);
    std::mutex m;
    std::condition_variable cv;
    bool done = false;
    std::vector<std::thread> workers;
    for (int i = 0; i < 2; i++)
        workers.emplace_back([&] {
            std::unique_lock<std::mutex> lk(m);
            cv.wait(lk, [&] { return done; });
        });
    for (auto &w : workers)
        pthread_kill(w.native_handle(), SIGUSR1);
    for (int i = 0; i < 2; i++)
        while (sem_wait(&reported) == -1 && errno == EINTR) {
        }
    assert(reports.load() == 2);
    {
        std::lock_guard<std::mutex> lk(m);
        done = true;
    }
    cv.notify_all();
    for (auto &w : workers)
        w.join();
    return 0;
}
