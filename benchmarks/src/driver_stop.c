/*
 * driver_stop.c -- device-driver stop flag checked without the lock
 * (SCTBench / KISS "BluetoothStop" style: use after stop).
 *
 * Pattern: an I/O thread calls io_increment() before using the device:
 *   if the driver is stopping it gives up, otherwise it increments the
 *   pending-I/O count under the lock. The stopper sets stopping_flag, drops
 *   the initial reference, waits until pending_io reaches 0 and marks the
 *   device stopped (= released).
 * Bug: stopping_flag is tested without holding the lock, separately from
 *   the increment. If the stopper sets the flag, drops the last reference
 *   and finishes stopping between the I/O thread's test and its increment,
 *   the I/O thread uses a stopped device. Pthread-call points suffice.
 * Expected: assertion failure ("use after stop") in the bad interleaving.
 */
#undef NDEBUG
#include <assert.h>
#include <pthread.h>
#include <stddef.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t stop_cv = PTHREAD_COND_INITIALIZER;
static volatile int stopping_flag;
static int pending_io = 1; /* the driver's own reference */
static int stopping_event;
static volatile int stopped;
static int io_done;

static int io_increment(void)
{
    if (stopping_flag) /* BUG: checked without the lock */
        return -1;
    pthread_mutex_lock(&m);
    pending_io++;
    pthread_mutex_unlock(&m);
    return 0;
}

static void io_decrement(void)
{
    pthread_mutex_lock(&m);
    pending_io--;
    if (pending_io == 0) {
        stopping_event = 1;
        pthread_cond_broadcast(&stop_cv);
    }
    pthread_mutex_unlock(&m);
}

static void *io_thread(void *arg)
{
    (void)arg;
    if (io_increment() == 0) {
        assert(!stopped && "use after stop");
        io_done++; /* "perform I/O" */
        io_decrement();
    }
    return NULL;
}

static void *stopper(void *arg)
{
    (void)arg;
    stopping_flag = 1;
    io_decrement();
    pthread_mutex_lock(&m);
    while (!stopping_event)
        pthread_cond_wait(&stop_cv, &m);
    pthread_mutex_unlock(&m);
    stopped = 1; /* device resources released */
    return NULL;
}

int main(void)
{
    pthread_t io, st;
    pthread_create(&io, NULL, io_thread, NULL);
    pthread_create(&st, NULL, stopper, NULL);
    pthread_join(io, NULL);
    pthread_join(st, NULL);
    assert(io_done <= 1);
    return 0;
}
