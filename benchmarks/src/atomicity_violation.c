/*
 * atomicity_violation.c -- check-then-act on a shared pointer (MySQL / Apache
 * log style atomicity violation).
 *
 * Pattern: the writer checks `g_log != NULL` and then re-reads g_log to use
 *   it; a closer thread sets g_log = NULL concurrently, without any lock.
 * Bug: if the closer's store lands between the writer's check and its
 *   re-read, the writer dereferences NULL. There is no pthread call inside
 *   the window, so memory-access scheduling points are needed.
 * Expected: crash (SIGSEGV) in the bad interleaving, else exit 0.
 */
#undef NDEBUG
#include <assert.h>
#include <pthread.h>
#include <sched.h>
#include <stddef.h>

#ifdef POS_STRESS /* native evidence builds only: widen the race window */
#define STRESS() sched_yield()
#else
#define STRESS() ((void)0)
#endif

struct log_buf {
    int len;
    int data[8];
};

static struct log_buf the_log;
static struct log_buf *volatile g_log = &the_log;

static void *writer(void *arg)
{
    (void)arg;
    for (int i = 0; i < 2; i++) {
        if (g_log != NULL) {           /* check */
            STRESS();
            struct log_buf *l = g_log; /* BUG: act re-reads the pointer */
            l->data[l->len] = i;       /* NULL dereference -> SIGSEGV */
            l->len++;
        }
    }
    return NULL;
}

static void *closer(void *arg)
{
    (void)arg;
    g_log = NULL;
    return NULL;
}

int main(void)
{
    pthread_t w, c;
    pthread_create(&w, NULL, writer, NULL);
    pthread_create(&c, NULL, closer, NULL);
    pthread_join(w, NULL);
    pthread_join(c, NULL);
    assert(the_log.len <= 2);
    return 0;
}
