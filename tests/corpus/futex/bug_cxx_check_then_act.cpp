// Buggy: two threads take a ticket if one is left; the check and the take are separate
// atomic operations with a yield between them, so both can take the last ticket.
#include <atomic>
#include <cassert>
#include <thread>

static std::atomic<int> tickets{1};
static std::atomic<int> sold{0};

static void buy() {
    if (tickets.load() > 0) {
        std::this_thread::yield();
        tickets.fetch_sub(1);
        sold.fetch_add(1);
    }
}

int main() {
    std::thread a(buy), b(buy);
    a.join();
    b.join();
    assert(sold.load() <= 1 && "sold more tickets than there were");
    return 0;
}
