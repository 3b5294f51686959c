// bug_cxx_init_once.cpp -- a lazily started service guarded by std::atomic flags, checked
// then set without a read-modify-write.
//
// Each thread asks for the service: if `started` (acquire load) is false it starts it
// (counts a start, relaxed fetch_add) and sets `started` (release store). Bug: two threads
// can both see false and both start it. A compare-exchange (acq_rel/relaxed) records which
// thread asked first; an exchange hands out a ticket.
// Expected: assertion failure (starts == 2) in some interleavings.
#undef NDEBUG
#include <atomic>
#include <cassert>
#include <thread>

static std::atomic<bool> started{false};
static std::atomic<int> starts{0};
static std::atomic<int> first_caller{0};
static std::atomic<long> ticket{0};

static void use_service(int id)
{
    if (!started.load(std::memory_order_acquire)) {
        starts.fetch_add(1, std::memory_order_relaxed);
        started.store(true, std::memory_order_release);
    }
    int none = 0;
    first_caller.compare_exchange_strong(none, id, std::memory_order_acq_rel,
                                         std::memory_order_relaxed);
    ticket.exchange(id, std::memory_order_seq_cst);
}

int main()
{
    std::thread a(use_service, 1);
    std::thread b(use_service, 2);
    a.join();
    b.join();
    assert(first_caller.load() != 0);
    assert(starts.load() == 1);
    return 0;
}
