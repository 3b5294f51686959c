/* Correct: a shared library starts a helper thread on first use and, in its ELF destructor,
 * wakes it and joins it (libuv's thread pool and uv_library_shutdown do this). Built twice:
 * with -DLIB -shared -fPIC as libhelper.so, and as the program linked with it.
 * libpos's exit hook was tied to libpos's own destructors: it ended control before this
 * library's destructor ran, whose wake and join then hung every run. */
#include <pthread.h>

#ifdef LIB
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int stop, started;
static pthread_t worker;

static void *work(void *arg) {
    (void)arg;
    pthread_mutex_lock(&mu);
    while (!stop)
        pthread_cond_wait(&cv, &mu);
    pthread_mutex_unlock(&mu);
    return 0;
}

void helper_start(void) {
    started = 1;
    pthread_create(&worker, 0, work, 0);
}

__attribute__((destructor)) static void helper_shutdown(void) {
    if (!started)
        return;
    pthread_mutex_lock(&mu);
    stop = 1;
    pthread_cond_signal(&cv);
    pthread_mutex_unlock(&mu);
    pthread_join(worker, 0);
}
#else
void helper_start(void);
int main(void) {
    helper_start();
    return 0;
}
#endif
