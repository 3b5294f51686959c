/*
 * stack_bad.c -- SCTBench stack_bad (SV-COMP stack_unsafe style).
 *
 * Pattern: a pusher pushes SIZE items, each push in its own critical
 *   section, and sets `flag` to announce "the stack has data". A popper
 *   pops, in its own critical sections, whenever flag is set.
 * Bug: flag is never reset, so once the first item was pushed the popper
 *   pops even when the stack is empty again (pop on empty -> UNDERFLOW).
 *   Reachable with pthread-call scheduling points only (lock boundaries).
 * Expected: assertion failure (underflow) in the popper in the bad
 *   interleaving.
 */
#undef NDEBUG
#include <assert.h>
#include <pthread.h>
#include <stddef.h>

#define SIZE 3
#define OVERFLOW (-1)
#define UNDERFLOW (-2)

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static int stack[SIZE];
static int top;
static int flag;

static int push(int v)
{
    if (top == SIZE)
        return OVERFLOW;
    stack[top++] = v;
    return 0;
}

static int pop(void)
{
    if (top == 0)
        return UNDERFLOW;
    return stack[--top];
}

static void *pusher(void *arg)
{
    (void)arg;
    for (int i = 0; i < SIZE; i++) {
        pthread_mutex_lock(&m);
        int r = push(i);
        assert(r != OVERFLOW);
        flag = 1;
        pthread_mutex_unlock(&m);
    }
    return NULL;
}

static void *popper(void *arg)
{
    (void)arg;
    for (int i = 0; i < SIZE; i++) {
        pthread_mutex_lock(&m);
        if (flag) { /* BUG: flag says "was non-empty once", not "non-empty" */
            int r = pop();
            assert(r != UNDERFLOW);
        }
        pthread_mutex_unlock(&m);
    }
    return NULL;
}

int main(void)
{
    pthread_t a, b;
    pthread_create(&a, NULL, pusher, NULL);
    pthread_create(&b, NULL, popper, NULL);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    return 0;
}
