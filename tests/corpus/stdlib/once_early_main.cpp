// std::call_once and a function-local static used first by a library's static initialiser
// (once_early_lib.cpp, loaded before libpos takes control), then from threads: each init
// must have run exactly once.
#include <cassert>
#include <cstdio>
#include <thread>
#include <vector>

extern int lib_inits, lib_static_inits;
void lib_use();

int main() {
    assert(lib_inits == 1 && lib_static_inits == 1);
    std::vector<std::thread> ts;
    for (int i = 0; i < 2; i++)
        ts.emplace_back([] {
            lib_use();
            assert(lib_inits == 1 && lib_static_inits == 1);
        });
    lib_use();
    for (auto &t : ts)
        t.join();
    assert(lib_inits == 1 && lib_static_inits == 1);
    std::printf("inits %d %d\n", lib_inits, lib_static_inits);
    return 0;
}
