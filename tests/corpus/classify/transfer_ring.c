/* Three tellers each move money from one account to the next around a ring
 * (0 -> 1, 1 -> 2, 2 -> 0), locking the source account, then the destination.
 * One after the other they are fine. If every teller takes its source lock
 * before the teller behind it takes its destination lock, each waits for the
 * next: a cycle of three locks, a deadlock no single swap of two acquisitions
 * of the serial run produces (two of them must be swapped). */
#include <pthread.h>
#include <stdio.h>

#define N 3

struct account {
    pthread_mutex_t lock;
    int balance;
};

static struct account accounts[N] = {
    {PTHREAD_MUTEX_INITIALIZER, 100},
    {PTHREAD_MUTEX_INITIALIZER, 100},
    {PTHREAD_MUTEX_INITIALIZER, 100},
};

static void transfer(struct account *from, struct account *to, int amount)
{
    pthread_mutex_lock(&from->lock);
    pthread_mutex_lock(&to->lock);
    from->balance -= amount;
    to->balance += amount;
    pthread_mutex_unlock(&to->lock);
    pthread_mutex_unlock(&from->lock);
}

static void *teller(void *arg)
{
    int i = (int)(long)arg;
    transfer(&accounts[i], &accounts[(i + 1) % N], 10 * (i + 1));
    return NULL;
}

int main(void)
{
    pthread_t t[N];
    for (long i = 0; i < N; i++)
        pthread_create(&t[i], NULL, teller, (void *)i);
    for (int i = 0; i < N; i++)
        pthread_join(t[i], NULL);
    int total = 0;
    for (int i = 0; i < N; i++) {
        printf("account %d: %d\n", i, accounts[i].balance);
        total += accounts[i].balance;
    }
    printf("total: %d\n", total);
    return 0;
}
