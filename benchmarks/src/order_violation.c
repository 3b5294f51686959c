/*
 * order_violation.c -- order violation (Mozilla nsThread style).
 *
 * Pattern: main creates a worker and only afterwards (after logging the
 *   creation under a mutex) publishes the pointer g_info that the worker
 *   dereferences. The worker silently assumes "created => initialised".
 * Bug: if the worker runs before main's store to g_info, it dereferences
 *   NULL. The window contains pthread calls (log mutex), so the bug is
 *   reachable with pthread-call scheduling points only.
 * Expected: crash (SIGSEGV, NULL dereference) in the bad order, else exit 0.
 */
#undef NDEBUG
#include <assert.h>
#include <pthread.h>
#include <stddef.h>

struct thread_info {
    int state;
};

static struct thread_info info = { 1 };
static struct thread_info *volatile g_info; /* published by main, too late */
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static int log_entries;

static void *worker(void *arg)
{
    (void)arg;
    struct thread_info *ti = g_info; /* BUG: may still be NULL */
    int s = ti->state;               /* NULL dereference -> SIGSEGV */
    assert(s == 1);
    return NULL;
}

int main(void)
{
    pthread_t t;
    pthread_create(&t, NULL, worker, NULL);
    pthread_mutex_lock(&log_lock); /* "log: thread created" */
    log_entries++;
    pthread_mutex_unlock(&log_lock);
    g_info = &info; /* publish after create: order violation */
    pthread_join(t, NULL);
    assert(log_entries == 1);
    return 0;
}
