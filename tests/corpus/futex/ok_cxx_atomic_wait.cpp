// Correct: two threads hand a token back and forth with std::atomic<int>::wait and
// notify_one (libstdc++ waits in futex system calls). Never a bug.
#include <atomic>
#include <cassert>
#include <thread>

static std::atomic<int> turn{0};
static int rounds_done[2];

static void player(int me) {
    for (int i = 0; i < 5; i++) {
        int t = turn.load();
        while (t != me) {
            turn.wait(t);
            t = turn.load();
        }
        rounds_done[me]++;
        turn.store(1 - me);
        turn.notify_one();
    }
}

int main() {
    std::thread a(player, 0), b(player, 1);
    a.join();
    b.join();
    assert(rounds_done[0] == 5 && rounds_done[1] == 5);
    return 0;
}
