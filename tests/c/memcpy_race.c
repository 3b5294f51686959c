/*
 * memcpy_race.c -- a torn copy that only bulk-memory scheduling points expose
 * (runner/tests/points.rs): the writer fills a shared buffer with two memset
 * calls, the reader copies it with one memcpy and checks it is not half
 * written. Built with `poscheck cc`, memcpy/memset are scheduling points in
 * `mem`/`races` mode; without them the copy never falls between the two fills.
 * Bug: the reader's copy happens between the writer's two memsets.
 */
#undef NDEBUG
#include <assert.h>
#include <pthread.h>
#include <stddef.h>
#include <string.h>

static char buf[16];

void *writer(void *arg)
{
    (void)arg;
    memset(buf, 'b', 8);
    memset(buf + 8, 'b', 8);
    return NULL;
}

void *reader(void *arg)
{
    char local[16];
    (void)arg;
    memcpy(local, buf, sizeof local);
    assert(local[0] == local[15]); /* BUG: half of the buffer written */
    return NULL;
}

int main(void)
{
    pthread_t w, r;
    pthread_create(&w, NULL, writer, NULL);
    pthread_create(&r, NULL, reader, NULL);
    pthread_join(w, NULL);
    pthread_join(r, NULL);
    return 0;
}
