// Buggy (C11 <threads.h>): two threads increment a counter with a read, a thrd_yield and a
// write and no mutex; an interleaving loses an update.
#include <assert.h>
#include <threads.h>

static int counter;

static int worker(void *arg) {
    (void)arg;
    int v = counter;
    thrd_yield();
    counter = v + 1;
    return 0;
}

int main(void) {
    thrd_t a, b;
    thrd_create(&a, worker, NULL);
    thrd_create(&b, worker, NULL);
    thrd_join(a, NULL);
    thrd_join(b, NULL);
    assert(counter == 2 && "lost update");
    return 0;
}
