/* Correct: a bounded job queue guarded by a GMutex with two GConds (not full / not empty),
 * each wait in a predicate loop; two producers, two consumers, a G_LOCK-protected tally,
 * a g_mutex_trylock fast path, and a consumer that gives up waiting at a deadline
 * (g_cond_wait_until) only when nothing is left. Every job is taken exactly once. */
#include <glib.h>

#define CAP 2
#define JOBS 3 /* per producer */

static GMutex m;
static GCond not_full, not_empty;
static int q[CAP], head, count, produced_done;
static long sum;
G_LOCK_DEFINE_STATIC(tally);
static int taken;

static gpointer producer(gpointer arg) {
    int base = GPOINTER_TO_INT(arg);
    for (int i = 1; i <= JOBS; i++) {
        if (!g_mutex_trylock(&m))
            g_mutex_lock(&m);
        while (count == CAP)
            g_cond_wait(&not_full, &m);
        q[(head + count) % CAP] = base + i;
        count++;
        g_cond_signal(&not_empty);
        g_mutex_unlock(&m);
    }
    g_mutex_lock(&m);
    produced_done++;
    g_cond_broadcast(&not_empty);
    g_mutex_unlock(&m);
    return NULL;
}

static gpointer consumer(gpointer arg) {
    (void)arg;
    for (;;) {
        g_mutex_lock(&m);
        while (count == 0 && produced_done < 2) {
            gint64 deadline = g_get_monotonic_time() + 50 * G_TIME_SPAN_MILLISECOND;
            if (!g_cond_wait_until(&not_empty, &m, deadline))
                g_assert(g_get_monotonic_time() >= deadline); /* a timeout only at its end */
        }
        if (count == 0) {
            g_mutex_unlock(&m);
            return NULL;
        }
        int v = q[head];
        head = (head + 1) % CAP;
        count--;
        sum += v;
        g_cond_signal(&not_full);
        g_mutex_unlock(&m);
        G_LOCK(tally);
        taken++;
        G_UNLOCK(tally);
    }
}

int main(void) {
    GThread *p1 = g_thread_new("p1", producer, GINT_TO_POINTER(0));
    GThread *p2 = g_thread_new("p2", producer, GINT_TO_POINTER(100));
    GThread *c1 = g_thread_new("c1", consumer, NULL);
    GThread *c2 = g_thread_new("c2", consumer, NULL);
    g_thread_join(p1);
    g_thread_join(p2);
    g_thread_join(c1);
    g_thread_join(c2);
    g_assert_cmpint(taken, ==, 2 * JOBS);
    g_assert_cmpint(sum, ==, (1 + 2 + 3) + (101 + 102 + 103));
    return 0;
}
