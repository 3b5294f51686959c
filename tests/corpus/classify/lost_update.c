/* Two threads deposit into one account without a lock: "balance += amount"
 * is a load and a store, so one deposit can be lost. main checks the balance
 * after joining both. */
#include <assert.h>
#include <pthread.h>
#include <stdio.h>

static int balance = 100;

static void *deposit(void *arg)
{
    int amount = *(int *)arg;
    balance += amount;
    return NULL;
}

int main(void)
{
    pthread_t t1, t2;
    int ten = 10, twenty = 20;
    pthread_create(&t1, NULL, deposit, &ten);
    pthread_create(&t2, NULL, deposit, &twenty);
    pthread_join(t1, NULL);
    pthread_join(t2, NULL);
    printf("balance: %d\n", balance);
    assert(balance == 130);
    return 0;
}
