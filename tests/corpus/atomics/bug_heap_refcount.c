/* Bug: release() decrements the reference count and then reads it again, instead of using
 * the value the decrement returned: when both threads decrement before either reads, both
 * see 0 and both free the object (a double free). The object is on the heap: an exploration
 * whose runs put it at a different address each time (the start message's prefix left blocks
 * of varying size in the program's heap) took it for several objects and called the search
 * complete after 1 execution, with no bug. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    char pad[32];
    atomic_int ref;
    int data;
} obj_t;

static void release(obj_t *o) {
    atomic_fetch_sub(&o->ref, 1);
    if (atomic_load(&o->ref) == 0)
        free(o);
}

static void *user(void *arg) {
    release(arg);
    return 0;
}

int main(void) {
    obj_t *o = malloc(sizeof *o);
    memset(o, 0, sizeof *o);
    atomic_init(&o->ref, 2);
    pthread_t a, b;
    pthread_create(&a, 0, user, o);
    pthread_create(&b, 0, user, o);
    pthread_join(a, 0);
    pthread_join(b, 0);
    return 0;
}
