// Correct: readers take a std::shared_mutex shared, a writer exclusive; a reader never
// sees the two halves of the pair disagree.
#include <cassert>
#include <mutex>
#include <shared_mutex>
#include <thread>
#include <vector>

static std::shared_mutex rw;
static int a, b;

int main() {
    std::vector<std::thread> ts;
    ts.emplace_back([] {
        for (int i = 1; i <= 3; i++) {
            std::unique_lock<std::shared_mutex> w(rw);
            a = i;
            std::this_thread::yield();
            b = i;
        }
    });
    for (int r = 0; r < 2; r++) {
        ts.emplace_back([] {
            for (int i = 0; i < 3; i++) {
                std::shared_lock<std::shared_mutex> s(rw);
                int x = a;
                std::this_thread::yield();
                assert(x == b);
            }
        });
    }
    for (auto &t : ts)
        t.join();
    assert(a == 3 && b == 3);
    return 0;
}
