// Correct (C++): a histogram of a vector filled in parallel, merged under a
// critical section, and a std::mutex-protected log.
#include <cassert>
#include <cstdio>
#include <mutex>
#include <omp.h>
#include <vector>

int main()
{
    std::vector<int> data(24);
#pragma omp parallel for
    for (int i = 0; i < 24; i++)
        data[i] = i % 3;

    std::vector<int> hist(3, 0);
    std::mutex log_mutex;
    std::vector<int> log;
#pragma omp parallel
    {
        std::vector<int> local(3, 0);
#pragma omp for nowait
        for (int i = 0; i < 24; i++)
            local[data[i]]++;
#pragma omp critical
        for (int b = 0; b < 3; b++)
            hist[b] += local[b];
        std::lock_guard<std::mutex> g(log_mutex);
        log.push_back(omp_get_thread_num());
    }
    assert(hist[0] == 8 && hist[1] == 8 && hist[2] == 8);
    assert((int)log.size() >= 1);
    std::printf("hist %d %d %d\n", hist[0], hist[1], hist[2]);
    return 0;
}
