// Correct: ok_kill_twice_read.c with std::thread: a thread blocked in read() of a pipe gets
// SIGUSR1 twice (pthread_kill through native_handle), 5 ms apart, and counts both.
#include <atomic>
#include <cassert>
#include <chrono>
#include <csignal>
#include <pthread.h>
#include <thread>
#include <unistd.h>

static int pfd[2];
static volatile std::sig_atomic_t hits;

int main() {
    struct sigaction sa {};
    sa.sa_handler = [](int) { hits = hits + 1; };
    sa.sa_flags = SA_RESTART;
    sigaction(SIGUSR1, &sa, nullptr);
    assert(pipe(pfd) == 0);
    std::thread reader([] {
        char c;
        while (read(pfd[0], &c, 1) != 1) {
        }
    });
    for (int i = 0; i < 2; i++) {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
        pthread_kill(reader.native_handle(), SIGUSR1);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    assert(write(pfd[1], "x", 1) == 1);
    reader.join();
    assert(hits == 2);
    return 0;
}
