/*
 * recursive_bad.c -- recursive mutex leaked on an early-return path.
 *
 * Pattern: a log protected by a PTHREAD_MUTEX_RECURSIVE mutex. log_append()
 *   calls log_flush() while holding the mutex when the log is full (nested
 *   locking, hence the recursive mutex). Two workers each append twice and
 *   flush; main flushes once more at the end.
 * Bug: log_flush() returns early when the log is empty without unlocking.
 *   When a flush finds the log empty (the other worker flushed everything
 *   since this worker's last append), the calling thread keeps the mutex
 *   after it exits; the next thread to lock it (the other worker or main)
 *   blocks forever. Pthread-call points suffice.
 * Expected: deadlock in the bad interleaving, else exit 0.
 */
#undef NDEBUG
#include <assert.h>
#include <pthread.h>
#include <stddef.h>

#define LOG_CAP 3

static pthread_mutex_t rm;
static int log_len;
static int flushed;

static void log_flush(void)
{
    pthread_mutex_lock(&rm);
    if (log_len == 0)
        return; /* BUG: leaks one level of the recursive lock */
    flushed += log_len;
    log_len = 0;
    pthread_mutex_unlock(&rm);
}

static void log_append(void)
{
    pthread_mutex_lock(&rm);
    if (log_len == LOG_CAP)
        log_flush(); /* nested acquisition of rm */
    log_len++;
    pthread_mutex_unlock(&rm);
}

static void *worker(void *arg)
{
    (void)arg;
    log_append();
    log_append();
    log_flush();
    return NULL;
}

int main(void)
{
    pthread_mutexattr_t attr;
    pthread_mutexattr_init(&attr);
    pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE);
    pthread_mutex_init(&rm, &attr);
    pthread_mutexattr_destroy(&attr);

    pthread_t a, b;
    pthread_create(&a, NULL, worker, NULL);
    pthread_create(&b, NULL, worker, NULL);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    log_flush(); /* blocks forever if a worker leaked the mutex */
    assert(flushed == 4);
    return 0;
}
