/*
 * timed_kernel_wait.c -- a thread waits in the kernel, outside control, until a timeout the
 * program relies on: nothing comes, and nothing else can run meanwhile.
 *
 * Usage: `timed_kernel_wait HOW SECONDS` with HOW recv (a socket with SO_RCVTIMEO; recv
 *   must fail with EAGAIN) or poll (poll on a socket for SECONDS; must return 0); the
 *   monotonic clock must show SECONDS elapsed.
 * Expected: exit 0 under poscheck with SECONDS above the step timeout: the thread announces
 *   its wait's timeout, so its silence is no hang (before 2026-11-28: a hang after the step
 *   timeout, with either transport). Pthread-call points suffice.
 */
#define _GNU_SOURCE
#include <sys/socket.h>
#include <sys/time.h>
#include <pthread.h>
#include <poll.h>
#include <assert.h>
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
static int sv[2];
static void *peer(void *a) { (void)a; return 0; }
int main(int argc, char **argv) {
  const char *how = argc > 1 ? argv[1] : "recv";
  assert(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
  pthread_t t; pthread_create(&t, 0, peer, 0); pthread_join(t, 0);
  struct timespec a, b; clock_gettime(CLOCK_MONOTONIC, &a);
  char buf[8];
  if (!strcmp(how, "recv")) {
    struct timeval tv = {argc > 2 ? atoi(argv[2]) : 3, 0};
    setsockopt(sv[0], SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    assert(recv(sv[0], buf, sizeof buf, 0) == -1 && errno == EAGAIN);
  } else {
    struct pollfd p = {sv[0], POLLIN, 0};
    assert(poll(&p, 1, (argc > 2 ? atoi(argv[2]) : 3) * 1000) == 0);
  }
  clock_gettime(CLOCK_MONOTONIC, &b);
  double el = (b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9;
  assert(el >= (argc > 2 ? atoi(argv[2]) : 3) - 0.1);
  puts("ok");
  return 0;
}
