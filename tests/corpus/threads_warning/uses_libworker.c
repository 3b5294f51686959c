/* Threads created in a shared library (libworker.so, found through RUNPATH $ORIGIN). */
int run_workers(void);

int main(void) { return run_workers() == 2 ? 0 : 1; }
