/* Buggy: timer_delete does not wait for a SIGEV_THREAD notification that has already started:
 * main frees the connection the notification uses (its expiry is due when main's sleep ends). */
#include <assert.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#define LIVE 0x5a5a5a5a
struct conn { long pad[4]; int magic; int keepalives; };
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static void keepalive(union sigval v){
  struct conn *c = v.sival_ptr;
  pthread_mutex_lock(&mu);
  assert(c->magic == LIVE);     // use after free when the callback outlives timer_delete
  c->keepalives++;
  pthread_mutex_unlock(&mu);
}
int main(void){
  struct conn *c = calloc(1, sizeof *c); c->magic = LIVE;
  timer_t t; struct sigevent ev = {0}; ev.sigev_notify = SIGEV_THREAD; ev.sigev_notify_function = keepalive; ev.sigev_value.sival_ptr = c;
  if (timer_create(CLOCK_MONOTONIC, &ev, &t)) return 1;
  struct itimerspec its = {{0,0},{0,10000000}};
  timer_settime(t, 0, &its, 0);
  usleep(10000);                 // the connection's work
  timer_delete(t);               // "no more callbacks after this" -- wrong for SIGEV_THREAD
  pthread_mutex_lock(&mu); c->magic = 0; pthread_mutex_unlock(&mu);
  free(c);
  usleep(20000);
  puts("closed"); return 0;
}
