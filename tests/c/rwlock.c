/* Readers check an invariant the writer breaks only while holding the write lock. */
#include <assert.h>
#include <pthread.h>
#include <sched.h>

static pthread_rwlock_t l = PTHREAD_RWLOCK_INITIALIZER;
static volatile int x, y;

static void *writer(void *arg) {
    for (int i = 0; i < 3; i++) {
        pthread_rwlock_wrlock(&l);
        x++;
        sched_yield();
        y++;
        pthread_rwlock_unlock(&l);
    }
    return arg;
}

static void *reader(void *arg) {
    for (int i = 0; i < 3; i++) {
        pthread_rwlock_rdlock(&l);
        int a = x;
        sched_yield();
        int b = y;
        assert(a == b);
        pthread_rwlock_unlock(&l);
    }
    return arg;
}

int main(void) {
    pthread_t w, r1, r2;
    pthread_create(&w, NULL, writer, NULL);
    pthread_create(&r1, NULL, reader, NULL);
    pthread_create(&r2, NULL, reader, NULL);
    pthread_join(w, NULL);
    pthread_join(r1, NULL);
    pthread_join(r2, NULL);
    assert(x == 3 && y == 3);
    return 0;
}
