// The library of once_early_main.cpp: its static initialiser (run when the library is
// loaded, before libpos's constructor) uses a std::call_once flag and a function-local
// static for the first time.
#include <mutex>

std::once_flag lib_flag;
int lib_inits;
int lib_static_inits;

static int make_static() { return ++lib_static_inits; }

void lib_use() {
    std::call_once(lib_flag, [] { ++lib_inits; });
    static int s = make_static();
    (void)s;
}

namespace {
struct Early {
    Early() { lib_use(); }
} early;
}  // namespace
