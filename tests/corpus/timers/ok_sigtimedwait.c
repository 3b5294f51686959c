// Correct: sigtimedwait: a short wait times out (EAGAIN) before the timer, a longer one
// receives its signal, and a last short one times out again.
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <time.h>
int main(void){
  sigset_t s; sigemptyset(&s); sigaddset(&s, SIGRTMIN+3); sigprocmask(SIG_BLOCK, &s, 0);
  timer_t t; struct sigevent ev = {0}; ev.sigev_notify = SIGEV_SIGNAL; ev.sigev_signo = SIGRTMIN+3; ev.sigev_value.sival_int = 5;
  if (timer_create(CLOCK_MONOTONIC, &ev, &t)) return 1;
  struct itimerspec its = {{0,0},{0,200000000}};
  timer_settime(t, 0, &its, 0);
  struct timespec shortw = {0, 50000000}, longw = {2, 0};
  siginfo_t si;
  int r = sigtimedwait(&s, &si, &shortw);
  if (r != -1 || errno != EAGAIN) { fprintf(stderr,"short wait r=%d errno=%d\n", r, errno); return 1; }
  r = sigtimedwait(&s, &si, &longw);
  if (r != SIGRTMIN+3 || si.si_value.sival_int != 5 || si.si_code != SI_TIMER) { fprintf(stderr,"long wait r=%d\n", r); return 1; }
  r = sigtimedwait(&s, &si, &shortw);
  if (r != -1 || errno != EAGAIN) return 1;
  timer_delete(t); puts("ok"); return 0;
}
