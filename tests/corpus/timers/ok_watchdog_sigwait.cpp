// Correct: a C++ test with an alarm() watchdog, a sigwait thread for SIGRTMIN+4 from a POSIX
// timer, and std::condition_variable::wait_for (steady clock) for the result.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <ctime>
#include <mutex>
#include <thread>
#include <unistd.h>
static std::mutex m; static std::condition_variable cv; static int received = 0;
static void watchdog(int) { const char msg[] = "watchdog fired\n"; write(2, msg, sizeof msg - 1); _exit(9); }
int main() {
  std::signal(SIGALRM, watchdog);
  alarm(5);
  sigset_t s; sigemptyset(&s); sigaddset(&s, SIGRTMIN + 4); pthread_sigmask(SIG_BLOCK, &s, nullptr);
  std::thread waiter([&] {
    for (int i = 0; i < 3; i++) { int sig; sigwait(&s, &sig);
      std::lock_guard<std::mutex> g(m); received++; cv.notify_all(); }
  });
  timer_t t; struct sigevent ev{}; ev.sigev_notify = SIGEV_SIGNAL; ev.sigev_signo = SIGRTMIN + 4;
  if (timer_create(CLOCK_MONOTONIC, &ev, &t)) return 1;
  itimerspec its{{0, 20000000}, {0, 20000000}};
  timer_settime(t, 0, &its, nullptr);
  {
    std::unique_lock<std::mutex> lk(m);
    if (!cv.wait_for(lk, std::chrono::seconds(2), [] { return received == 3; })) { std::fprintf(stderr, "wait_for timed out\n"); return 1; }
  }
  timer_delete(t);
  waiter.join();
  // nothing more should come: a short wait_for must time out
  {
    std::unique_lock<std::mutex> lk(m);
    if (cv.wait_for(lk, std::chrono::milliseconds(50), [] { return received > 3; })) return 1;
  }
  unsigned left = alarm(0);
  if (left == 0 || left > 5) { std::fprintf(stderr, "alarm left %u\n", left); return 1; }
  std::puts("ok"); return 0;
}
