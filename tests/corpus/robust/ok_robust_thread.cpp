// C++ threads sharing a robust pthread mutex through a guard that recovers it: one thread
// dies holding it (its std::thread function returns without unlocking), the others and
// the main thread recover with pthread_mutex_consistent. The count adds up.
#include <cassert>
#include <cerrno>
#include <cstdio>
#include <pthread.h>
#include <thread>
#include <vector>

class RobustMutex {
  public:
    RobustMutex() {
        pthread_mutexattr_t a;
        pthread_mutexattr_init(&a);
        pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
        pthread_mutex_init(&m_, &a);
        pthread_mutexattr_destroy(&a);
    }
    // Lock; true when the previous owner died holding it (the caller repairs the state).
    bool lock() {
        int r = pthread_mutex_lock(&m_);
        bool died = r == EOWNERDEAD;
        if (died)
            r = pthread_mutex_consistent(&m_);
        assert(r == 0);
        return died;
    }
    void unlock() { pthread_mutex_unlock(&m_); }

  private:
    pthread_mutex_t m_;
};

static RobustMutex mu;
static int value, dirty;

static void enter() {
    if (mu.lock()) {
        assert(dirty);
        dirty = 0;
    }
    assert(!dirty);
}

int main() {
    std::vector<std::thread> ts;
    ts.emplace_back([] {
        enter();
        dirty = 1;
        ++value;  // and dies holding mu
    });
    for (int k = 0; k < 2; k++)
        ts.emplace_back([] {
            for (int i = 0; i < 2; i++) {
                enter();
                ++value;
                mu.unlock();
            }
        });
    for (auto &t : ts)
        t.join();
    enter();
    assert(value == 5);
    mu.unlock();
    std::printf("value %d\n", value);
    return 0;
}
