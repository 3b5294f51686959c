/* Three tellers each move money from one account to the next around a ring
 * (0 -> 1, 1 -> 2, 2 -> 0). Every teller locks the two accounts in one global
 * order, the lower-numbered account first, whichever is the source: no cycle of
 * waits can form, whatever the interleaving. */
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

static void transfer(int from, int to, int amount)
{
    struct account *first = &accounts[from < to ? from : to];
    struct account *second = &accounts[from < to ? to : from];
    pthread_mutex_lock(&first->lock);
    pthread_mutex_lock(&second->lock);
    accounts[from].balance -= amount;
    accounts[to].balance += amount;
    pthread_mutex_unlock(&second->lock);
    pthread_mutex_unlock(&first->lock);
}

static void *teller(void *arg)
{
    int i = (int)(long)arg;
    transfer(i, (i + 1) % N, 10 * (i + 1));
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
