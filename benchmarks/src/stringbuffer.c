/*
 * stringbuffer.c -- Java StringBuffer.append(StringBuffer) atomicity bug.
 *
 * Pattern: sb_append(dst, src) is "synchronized" on dst; it calls
 *   sb_length(src) (locks src), then sb_get_chars(src, len, ...) (locks src
 *   again). Another thread calls sb_erase(src) (locks src) concurrently.
 * Bug: src's length is read in one critical section and used in another;
 *   if the erase runs in between, get_chars is asked for more characters
 *   than src holds (Java: StringIndexOutOfBoundsException). The window is
 *   between pthread calls, so pthread-call points suffice.
 * Expected: assertion failure in sb_get_chars in the bad interleaving.
 */
#undef NDEBUG
#include <assert.h>
#include <pthread.h>
#include <stddef.h>

#define SB_CAP 32

struct sbuf {
    pthread_mutex_t m;
    int len;
    char data[SB_CAP];
};

static struct sbuf a = { PTHREAD_MUTEX_INITIALIZER, 3, "abc" };
static struct sbuf b = { PTHREAD_MUTEX_INITIALIZER, 4, "wxyz" };

static int sb_length(struct sbuf *s)
{
    pthread_mutex_lock(&s->m);
    int n = s->len;
    pthread_mutex_unlock(&s->m);
    return n;
}

static void sb_get_chars(struct sbuf *s, int n, char *dst)
{
    pthread_mutex_lock(&s->m);
    assert(n <= s->len && "StringIndexOutOfBounds");
    for (int i = 0; i < n; i++)
        dst[i] = s->data[i];
    pthread_mutex_unlock(&s->m);
}

static void sb_append(struct sbuf *dst, struct sbuf *src)
{
    pthread_mutex_lock(&dst->m);
    int n = sb_length(src); /* BUG: length and copy are not atomic */
    assert(dst->len + n <= SB_CAP);
    sb_get_chars(src, n, dst->data + dst->len);
    dst->len += n;
    pthread_mutex_unlock(&dst->m);
}

static void sb_erase(struct sbuf *s)
{
    pthread_mutex_lock(&s->m);
    s->len = 0;
    pthread_mutex_unlock(&s->m);
}

static void *appender(void *arg)
{
    (void)arg;
    sb_append(&a, &b);
    return NULL;
}

static void *eraser(void *arg)
{
    (void)arg;
    sb_erase(&b);
    return NULL;
}

int main(void)
{
    pthread_t t1, t2;
    pthread_create(&t1, NULL, appender, NULL);
    pthread_create(&t2, NULL, eraser, NULL);
    pthread_join(t1, NULL);
    pthread_join(t2, NULL);
    assert(a.len == 3 || a.len == 7);
    return 0;
}
