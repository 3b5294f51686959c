/*
 * lazy_init.c -- lazy initialisation without synchronisation.
 *
 * Pattern: get_config() creates the singleton on first use:
 *   `if (instance == NULL) { create; instance = c; }`. Creation logs
 *   through a mutex-protected counter, so the unprotected check is
 *   separated from the publication by pthread calls.
 * Bug: two threads can both see instance == NULL and both create a
 *   config; one thread then works with an object that is not the singleton.
 *   Reachable with pthread-call points only.
 * Expected: assertion failure in main (created != 1) in the bad interleaving.
 */
#undef NDEBUG
#include <assert.h>
#include <pthread.h>
#include <stddef.h>

struct config {
    int value;
};

static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static struct config pool[2];
static int created;
static struct config *instance;
static struct config *seen[2];

static struct config *get_config(void)
{
    if (instance == NULL) { /* BUG: unsynchronised check-then-create */
        pthread_mutex_lock(&log_lock); /* "log: creating config" */
        struct config *c = &pool[created++];
        pthread_mutex_unlock(&log_lock);
        c->value = 42;
        instance = c;
    }
    return instance;
}

static void *user(void *arg)
{
    int id = (int)(long)arg;
    struct config *c = get_config();
    assert(c->value == 42);
    seen[id] = c;
    return NULL;
}

int main(void)
{
    pthread_t a, b;
    pthread_create(&a, NULL, user, (void *)0L);
    pthread_create(&b, NULL, user, (void *)1L);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    assert(created == 1);
    assert(seen[0] == seen[1]);
    return 0;
}
