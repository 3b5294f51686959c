/* The same deposits as lost_update.c, done under a mutex: no data race. */
#include <assert.h>
#include <pthread.h>
#include <stdio.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static int balance = 100;

static void *deposit(void *arg)
{
    int amount = *(int *)arg;
    pthread_mutex_lock(&m);
    balance += amount;
    pthread_mutex_unlock(&m);
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
