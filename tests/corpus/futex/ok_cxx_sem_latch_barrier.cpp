// Correct: a bounded buffer guarded by two std::counting_semaphores and a std::mutex, a
// std::latch that releases the workers together, and a std::barrier between two phases.
#include <barrier>
#include <cassert>
#include <latch>
#include <mutex>
#include <semaphore>
#include <thread>
#include <vector>

static std::counting_semaphore<2> free_slots{2};
static std::counting_semaphore<2> full_slots{0};
static std::mutex buf_mutex;
static std::vector<int> buf;
static std::latch start{3};
static std::barrier phase{2};
static int phase_sum[2];

int main() {
    std::thread producer([] {
        start.arrive_and_wait();
        for (int i = 1; i <= 4; i++) {
            free_slots.acquire();
            {
                std::lock_guard<std::mutex> g(buf_mutex);
                buf.push_back(i);
            }
            full_slots.release();
        }
    });
    std::thread consumer([] {
        start.arrive_and_wait();
        int sum = 0;
        for (int i = 0; i < 4; i++) {
            full_slots.acquire();
            {
                std::lock_guard<std::mutex> g(buf_mutex);
                sum += buf.back();
                buf.pop_back();
            }
            free_slots.release();
        }
        assert(sum == 10);
    });
    start.arrive_and_wait();
    producer.join();
    consumer.join();

    std::thread worker([] {
        phase_sum[0] = 1;
        phase.arrive_and_wait();
        assert(phase_sum[1] == 2);
    });
    phase_sum[1] = 2;
    phase.arrive_and_wait();
    assert(phase_sum[0] == 1);
    worker.join();
    return 0;
}
