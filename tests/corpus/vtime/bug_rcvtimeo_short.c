/* Buggy: the reader gives the sender SECONDS (argv[1], default 1) through SO_RCVTIMEO and
 * asserts the line came, but the sender sleeps twice as long before it writes: the receive
 * times out (an assertion in main, every run). The timed kernel wait must still end as a
 * timeout, not be excused into a hang or a pass. */
#include <assert.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>
static int sv[2];
static int secs = 1;
static void *sender(void *a) {
    (void)a;
    sleep(2 * secs);
    assert(write(sv[1], "hello", 5) == 5);
    return NULL;
}
int main(int argc, char **argv) {
    if (argc > 1)
        secs = atoi(argv[1]);
    assert(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
    struct timeval tv = {secs, 0};
    setsockopt(sv[0], SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    pthread_t t;
    pthread_create(&t, NULL, sender, NULL);
    char buf[8];
    ssize_t n = recv(sv[0], buf, sizeof buf, 0);
    assert(n == 5); /* BUG: the sender may take longer than the timeout */
    pthread_join(t, NULL);
    return 0;
}
