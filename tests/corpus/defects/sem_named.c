// A named semaphore (sem_open) as a lock around a read-yield-write of a counter. With
// argument "2" it is opened with count 2, so two threads can be inside at once and an
// update is lost on some schedules; with no argument (count 1) the program is correct.
// Before libpos announced sem_open'ed semaphores to the coordinator, the model counted
// them 0 and every run of the correct program was a false deadlock.
#include <assert.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static sem_t *gate;
static int counter;

static void *worker(void *arg) {
  (void)arg;
  sem_wait(gate);
  int seen = counter;
  sched_yield();
  counter = seen + 1;
  sem_post(gate);
  return NULL;
}

int main(int argc, char **argv) {
  char name[64];
  snprintf(name, sizeof name, "/poscheck-sem-%d", (int)getpid());
  unsigned count = argc > 1 ? (unsigned)atoi(argv[1]) : 1;
  gate = sem_open(name, O_CREAT | O_EXCL, 0600, count);
  if (gate == SEM_FAILED) {
    perror("sem_open");
    return 2;
  }
  sem_unlink(name);
  pthread_t t[3];
  for (int i = 0; i < 3; i++)
    pthread_create(&t[i], NULL, worker, NULL);
  for (int i = 0; i < 3; i++)
    pthread_join(t[i], NULL);
  assert(counter == 3);
  sem_close(gate);
  return 0;
}
