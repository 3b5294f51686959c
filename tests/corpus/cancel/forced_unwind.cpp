// Correct (C++): a worker that catches everything around its blocking wait must let
// cancellation through: it catches abi::__forced_unwind, notes it, and rethrows (swallowing
// it would abort). Its catch (...) below is never reached. Join returns PTHREAD_CANCELED.
#include <cassert>
#include <cxxabi.h>
#include <pthread.h>
#include <semaphore.h>

static sem_t never;
static int seen_unwind, swallowed;

static void *worker(void *) {
    try {
        try {
            sem_wait(&never);
        } catch (abi::__forced_unwind &) {
            seen_unwind++;
            throw;
        }
    } catch (abi::__forced_unwind &) {
        seen_unwind++;
        throw;
    } catch (...) {
        swallowed++;
    }
    return nullptr;
}

int main() {
    pthread_t t;
    void *ret;
    sem_init(&never, 0, 0);
    pthread_create(&t, nullptr, worker, nullptr);
    pthread_cancel(t);
    pthread_join(t, &ret);
    assert(ret == PTHREAD_CANCELED);
    assert(seen_unwind == 2 && swallowed == 0);
    return 0;
}
