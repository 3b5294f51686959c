// Correct: a periodic POSIX timer (SIGEV_SIGNAL) feeds a sigwait thread, which queues ticks for
// a worker; main stops the sigwait thread with pthread_kill once the worker has ten.
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <time.h>
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int pending, stop, processed;
static void *sigthr(void *a){
  sigset_t s; sigemptyset(&s); sigaddset(&s, SIGRTMIN);
  for(;;){ int sig; sigwait(&s,&sig);
    pthread_mutex_lock(&mu);
    if (stop) { pthread_mutex_unlock(&mu); break; }
    pending++; pthread_cond_signal(&cv); pthread_mutex_unlock(&mu); }
  return a;
}
static void *worker(void *a){
  pthread_mutex_lock(&mu);
  while (processed < 10) {
    while (pending == 0) pthread_cond_wait(&cv,&mu);
    pending--; processed++;
  }
  pthread_mutex_unlock(&mu);
  return a;
}
int main(void){
  sigset_t s; sigemptyset(&s); sigaddset(&s, SIGRTMIN);
  pthread_sigmask(SIG_BLOCK, &s, 0);
  pthread_t st, wt; pthread_create(&st,0,sigthr,0); pthread_create(&wt,0,worker,0);
  timer_t t; struct sigevent ev = {0}; ev.sigev_notify = SIGEV_SIGNAL; ev.sigev_signo = SIGRTMIN;
  if (timer_create(CLOCK_MONOTONIC, &ev, &t)) return 1;
  struct itimerspec its = {{0,5000000},{0,5000000}};
  timer_settime(t, 0, &its, 0);
  pthread_join(wt, 0);
  timer_delete(t);
  pthread_mutex_lock(&mu); stop = 1; pthread_mutex_unlock(&mu);
  pthread_kill(st, SIGRTMIN);   // wake the sigwait thread so it sees stop
  pthread_join(st, 0);
  printf("ok processed=%d\n", processed); return processed == 10 ? 0 : 1;
}
