/* Correct: a program that does not link GLib loads a plugin built against it with
 * dlopen(RTLD_LOCAL) (as Python loads an extension module), and two threads bump the
 * plugin's GMutex-guarded counter. libglib is then outside the global scope: before
 * 2026-11-28 libpos's g_mutex_lock could not find GLib's and stopped every run (an
 * `error`). argv[1]: the plugin's path. */
#include <assert.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

static int (*bump)(void);

static void *worker(void *arg) {
    (void)arg;
    bump();
    return NULL;
}

int main(int argc, char **argv) {
    if (argc < 2)
        return 2;
    void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        fprintf(stderr, "%s\n", dlerror());
        return 2;
    }
    bump = (int (*)(void))dlsym(h, "plugin_bump");
    assert(bump);
    pthread_t t;
    pthread_create(&t, NULL, worker, NULL);
    bump();
    pthread_join(t, NULL);
    assert(bump() == 3);
    return 0;
}
