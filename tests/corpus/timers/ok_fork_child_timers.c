// Correct: timers armed in a forked child (alarm waited for with pause, then a SIGEV_THREAD
// timer); the parent checks the child's exit status.
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
static volatile sig_atomic_t alarmed;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int fired;
static void h(int s){ (void)s; alarmed = 1; }
static void notify(union sigval v){ (void)v; pthread_mutex_lock(&mu); fired = 1; pthread_cond_signal(&cv); pthread_mutex_unlock(&mu); }
int main(void){
  pid_t p = fork();
  if (p < 0) return 1;
  if (p == 0) {
    signal(SIGALRM, h);
    alarm(1);
    while (!alarmed) pause();
    timer_t t; struct sigevent ev = {0}; ev.sigev_notify = SIGEV_THREAD; ev.sigev_notify_function = notify;
    if (timer_create(CLOCK_MONOTONIC, &ev, &t)) _exit(2);
    struct itimerspec its = {{0,0},{0,20000000}};
    timer_settime(t, 0, &its, 0);
    pthread_mutex_lock(&mu); while (!fired) pthread_cond_wait(&cv, &mu); pthread_mutex_unlock(&mu);
    timer_delete(t);
    _exit(0);
  }
  int st; if (waitpid(p, &st, 0) != p) return 1;
  if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) { fprintf(stderr,"child status %x\n", st); return 1; }
  puts("ok"); return 0;
}
