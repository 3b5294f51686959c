/* Helpers shared by the end-to-end test programs. */
#ifndef E2E_COMMON_H
#define E2E_COMMON_H
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* Append this process's pid to $E2E_PIDFILE (if set), so the test can check that no process
 * of the run is left afterwards. Uses write(2) directly: stdout may be closed. */
static inline void record_pid(void) {
    const char *f = getenv("E2E_PIDFILE");
    if (!f) return;
    FILE *fp = fopen(f, "a");
    if (!fp) return;
    fprintf(fp, "%d\n", (int)getpid());
    fclose(fp);
}
#endif
