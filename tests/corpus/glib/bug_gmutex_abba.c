/* Buggy: two GThreads take two GMutexes in opposite orders.
 * Trigger: t1 holds A and t2 holds B before either takes its second lock: a deadlock. */
#include <glib.h>

static GMutex a, b;
static int x;

static gpointer t1(gpointer d) {
    (void)d;
    g_mutex_lock(&a);
    g_mutex_lock(&b);
    x++;
    g_mutex_unlock(&b);
    g_mutex_unlock(&a);
    return NULL;
}

static gpointer t2(gpointer d) {
    (void)d;
    g_mutex_lock(&b);
    g_mutex_lock(&a);
    x--;
    g_mutex_unlock(&a);
    g_mutex_unlock(&b);
    return NULL;
}

int main(void) {
    GThread *p = g_thread_new("t1", t1, NULL), *q = g_thread_new("t2", t2, NULL);
    g_thread_join(p);
    g_thread_join(q);
    return x;
}
