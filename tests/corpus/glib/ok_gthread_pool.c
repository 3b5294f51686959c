/* Correct: a GThreadPool adds into a GMutex-guarded total; main waits for the result with
 * a GCond in a predicate loop (the count of finished jobs), and a GAsyncQueue carries the
 * jobs' acknowledgements back. g_once initialises the table the jobs share. */
#include <glib.h>

static GMutex m;
static GCond all_done;
static int finished;
static long total;
static GAsyncQueue *acks;

static gpointer make_table(gpointer arg) {
    (void)arg;
    int *t = g_new(int, 4);
    for (int i = 0; i < 4; i++)
        t[i] = i + 1;
    return t;
}

static GOnce once = G_ONCE_INIT;

static void job(gpointer data, gpointer user) {
    (void)user;
    int *table = g_once(&once, make_table, NULL);
    int i = GPOINTER_TO_INT(data) - 1; /* pushed as i + 1: a pool takes no NULL */
    g_mutex_lock(&m);
    total += table[i];
    finished++;
    g_cond_signal(&all_done);
    g_mutex_unlock(&m);
    g_async_queue_push(acks, GINT_TO_POINTER(i + 1));
}

int main(void) {
    acks = g_async_queue_new();
    GThreadPool *pool = g_thread_pool_new(job, NULL, 2, FALSE, NULL);
    for (int i = 0; i < 4; i++)
        g_thread_pool_push(pool, GINT_TO_POINTER(i + 1), NULL);
    g_mutex_lock(&m);
    while (finished < 4)
        g_cond_wait(&all_done, &m);
    g_mutex_unlock(&m);
    int acked = 0;
    for (int i = 0; i < 4; i++)
        acked += GPOINTER_TO_INT(g_async_queue_pop(acks));
    g_thread_pool_free(pool, FALSE, TRUE);
    g_async_queue_unref(acks);
    g_assert_cmpint(total, ==, 10);
    g_assert_cmpint(acked, ==, 10);
    return 0;
}
