/* Buggy: an increment split across two GMutex sections (read in one, write in the next).
 * Trigger: the other thread's whole increment between a thread's two sections: an update
 * is lost and the final count is 1, not 2. */
#include <glib.h>

static GMutex m;
static int counter;

static gpointer inc(gpointer d) {
    (void)d;
    g_mutex_lock(&m);
    int v = counter;
    g_mutex_unlock(&m);
    g_mutex_lock(&m);
    counter = v + 1;
    g_mutex_unlock(&m);
    return NULL;
}

int main(void) {
    GThread *p = g_thread_new("a", inc, NULL), *q = g_thread_new("b", inc, NULL);
    g_thread_join(p);
    g_thread_join(q);
    g_assert_cmpint(counter, ==, 2);
    return 0;
}
