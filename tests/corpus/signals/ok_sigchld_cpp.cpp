// Correct: a C++ program runs a child process (fork + _exit after 5 ms of work) while a
// std::thread pool of two workers fills a vector under a std::mutex; the SIGCHLD handler
// posts a POSIX semaphore (async-signal-safe) that main waits on before it reaps the child.
#include <semaphore.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cassert>
#include <cerrno>
#include <mutex>
#include <thread>
#include <vector>

static sem_t child_done;

extern "C" void on_child(int) { sem_post(&child_done); }

int main() {
    sem_init(&child_done, 0, 0);
    struct sigaction sa {};
    sa.sa_handler = on_child;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    sigaction(SIGCHLD, &sa, nullptr);
    std::mutex m;
    std::vector<int> items;
    std::vector<std::thread> pool;
    for (int w = 0; w < 2; w++)
        pool.emplace_back([&, w] {
            for (int i = 0; i < 3; i++) {
                std::lock_guard<std::mutex> g(m);
                items.push_back(w * 10 + i);
            }
        });
    pid_t c = fork();
    if (c == 0) {
        usleep(5000);
        _exit(7);
    }
    while (sem_wait(&child_done) != 0)
        assert(errno == EINTR);
    int st = 0;
    assert(waitpid(c, &st, 0) == c && WIFEXITED(st) && WEXITSTATUS(st) == 7);
    for (auto &t : pool)
        t.join();
    assert(items.size() == 6);
    return 0;
}
