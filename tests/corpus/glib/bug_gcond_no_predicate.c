/* Buggy: main waits on a GCond without a predicate for a worker's "ready" signal.
 * Trigger: the worker signals before main has started waiting: the wakeup is lost and main
 * waits for ever (a deadlock once the worker has ended). */
#include <glib.h>

static GMutex m;
static GCond c;
static int ready;

static gpointer worker(gpointer d) {
    (void)d;
    g_mutex_lock(&m);
    ready = 1;
    g_cond_signal(&c);
    g_mutex_unlock(&m);
    return NULL;
}

int main(void) {
    GThread *t = g_thread_new("worker", worker, NULL);
    g_mutex_lock(&m);
    g_cond_wait(&c, &m); /* should be: while (!ready) g_cond_wait(...) */
    g_mutex_unlock(&m);
    g_thread_join(t);
    return ready ? 0 : 1;
}
