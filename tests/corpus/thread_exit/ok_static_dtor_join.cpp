// Correct: a global service object starts its worker in its constructor (before main) and
// its destructor, run by exit, stops and joins it. Before 2026-11-27 the destructor ran
// after the process exit was posted, uncontrolled: the run hung until the step timeout.
#include <condition_variable>
#include <mutex>
#include <thread>

struct Service {
    std::mutex m;
    std::condition_variable cv;
    bool stop = false;
    int jobs = 0;
    std::thread th;
    Service() {
        th = std::thread([this] {
            std::unique_lock<std::mutex> l(m);
            while (!stop) {
                cv.wait(l);
                jobs++;
            }
        });
    }
    void poke() {
        {
            std::lock_guard<std::mutex> l(m);
        }
        cv.notify_one();
    }
    ~Service() {
        {
            std::lock_guard<std::mutex> l(m);
            stop = true;
        }
        cv.notify_one();
        th.join();
    }
};

static Service service;

int main() {
    for (int i = 0; i < 3; i++)
        service.poke();
}
