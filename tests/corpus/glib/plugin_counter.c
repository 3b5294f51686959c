/* The plugin of ok_glib_plugin.c: a counter behind a GMutex, built against GLib as a shared
 * library that the program loads with dlopen(RTLD_LOCAL). */
#include <glib.h>

static GMutex m;
static int n;

int plugin_bump(void) {
    g_mutex_lock(&m);
    int v = ++n;
    g_mutex_unlock(&m);
    return v;
}
