// ok_cxx_init_once.cpp -- the service of bug_cxx_init_once.cpp started correctly: the
// thread whose compare-exchange (acq_rel/acquire) moves `state` from 0 to 1 starts it,
// then publishes it with a release store of 2; the others only count a request (relaxed).
// Expected: always exits 0.
#undef NDEBUG
#include <atomic>
#include <cassert>
#include <thread>

static std::atomic<int> state{0};
static std::atomic<int> starts{0};
static std::atomic<int> requests{0};

static void use_service()
{
    int idle = 0;
    if (state.compare_exchange_strong(idle, 1, std::memory_order_acq_rel,
                                      std::memory_order_acquire)) {
        starts.fetch_add(1, std::memory_order_relaxed);
        state.store(2, std::memory_order_release);
    }
    requests.fetch_add(1, std::memory_order_relaxed);
}

int main()
{
    std::thread a(use_service);
    std::thread b(use_service);
    std::thread c(use_service);
    a.join();
    b.join();
    c.join();
    assert(starts.load(std::memory_order_acquire) == 1);
    assert(requests.load() == 3);
    assert(state.load() == 2);
    return 0;
}
