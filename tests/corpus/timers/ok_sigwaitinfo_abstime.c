// Correct: TIMER_ABSTIME on CLOCK_MONOTONIC with SIGEV_SIGNAL, taken by sigwaitinfo; after each
// signal the clock reads at least the expiry (si_code and si_value checked).
#include <signal.h>
#include <stdio.h>
#include <time.h>
int main(void){
  sigset_t s; sigemptyset(&s); sigaddset(&s, SIGRTMIN+2); sigprocmask(SIG_BLOCK, &s, 0);
  timer_t t; struct sigevent ev = {0}; ev.sigev_notify = SIGEV_SIGNAL; ev.sigev_signo = SIGRTMIN+2; ev.sigev_value.sival_int = 1234;
  if (timer_create(CLOCK_MONOTONIC, &ev, &t)) return 1;
  struct timespec start; clock_gettime(CLOCK_MONOTONIC, &start);
  for (int i = 1; i <= 3; i++) {
    struct timespec d = start; d.tv_nsec += i * 20000000L; if (d.tv_nsec >= 1000000000) { d.tv_sec++; d.tv_nsec -= 1000000000; }
    struct itimerspec its = {{0,0}, d};
    if (timer_settime(t, TIMER_ABSTIME, &its, 0)) return 1;
    siginfo_t si; int sig = sigwaitinfo(&s, &si);
    if (sig != SIGRTMIN+2) return 1;
    if (si.si_code != SI_TIMER) { fprintf(stderr,"si_code %d\n", si.si_code); return 1; }
    if (si.si_value.sival_int != 1234) { fprintf(stderr,"sival %d\n", si.si_value.sival_int); return 1; }
    struct timespec now; clock_gettime(CLOCK_MONOTONIC, &now);
    if (now.tv_sec < d.tv_sec || (now.tv_sec == d.tv_sec && now.tv_nsec < d.tv_nsec)) { fprintf(stderr,"early\n"); return 1; }
  }
  timer_delete(t); puts("ok"); return 0;
}
