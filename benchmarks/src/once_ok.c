/*
 * once_ok.c -- pthread_once initialisation plus a recursive mutex
 * (bug-free).
 *
 * Pattern: NT threads call pthread_once(init_table) and then use the
 *   table; init_table must run exactly once and complete before any
 *   pthread_once call returns. Afterwards each thread adds to a total via
 *   add_twice(), which takes a PTHREAD_MUTEX_RECURSIVE mutex and calls
 *   add_one(), which takes the same mutex again.
 * Expected: no bug in any interleaving (exit 0).
 */
#undef NDEBUG
#include <assert.h>
#include <pthread.h>
#include <stddef.h>

#define NT 3
#define TABLE 4

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int init_calls;
static int table[TABLE];
static pthread_mutex_t rm;
static int total;

static void init_table(void)
{
    init_calls++;
    for (int i = 0; i < TABLE; i++)
        table[i] = i * i;
}

static void add_one(int v)
{
    pthread_mutex_lock(&rm);
    total += v;
    pthread_mutex_unlock(&rm);
}

static void add_twice(int v)
{
    pthread_mutex_lock(&rm);
    add_one(v); /* nested acquisition: requires the recursive type */
    add_one(v);
    pthread_mutex_unlock(&rm);
}

static void *worker(void *arg)
{
    (void)arg;
    pthread_once(&once, init_table);
    assert(init_calls == 1);
    assert(table[TABLE - 1] == (TABLE - 1) * (TABLE - 1));
    add_twice(table[2]);
    return NULL;
}

int main(void)
{
    pthread_mutexattr_t attr;
    pthread_mutexattr_init(&attr);
    pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE);
    pthread_mutex_init(&rm, &attr);
    pthread_mutexattr_destroy(&attr);

    pthread_t t[NT];
    for (int i = 0; i < NT; i++)
        pthread_create(&t[i], NULL, worker, NULL);
    for (int i = 0; i < NT; i++)
        pthread_join(t[i], NULL);
    assert(init_calls == 1);
    assert(total == NT * 2 * 4);
    pthread_mutex_destroy(&rm);
    return 0;
}
