/* Two threads count under a mutex and free their own buffers: correct. Built with gcc and
 * clang-14, -fsanitize=address and -fsanitize=thread, as a nightly sanitizer build would
 * be. Before 2026-11-28: gcc's shared ASan runtime refused to start behind libpos (every
 * run an error), gcc's shared TSan runtime crashed or hung most runs, and LeakSanitizer
 * reported libpos's own blocks as the program's leaks. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static int counter;

static void *work(void *a) {
    char *buf = malloc(64);
    memset(buf, 1, 64);
    for (int i = 0; i < 2; i++) {
        pthread_mutex_lock(&m);
        counter += buf[i];
        pthread_mutex_unlock(&m);
    }
    free(buf);
    return a;
}

int main(void) {
    pthread_t t;
    pthread_create(&t, NULL, work, NULL);
    work(NULL);
    pthread_join(t, NULL);
    return counter == 4 ? 0 : 1;
}
