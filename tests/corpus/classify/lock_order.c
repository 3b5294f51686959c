/* Two threads move money between two accounts, each locking the source account
 * first: one locks a then b, the other b then a. Run one after the other they
 * are fine; if each takes its first lock before the other takes its second,
 * they deadlock. */
#include <pthread.h>
#include <stdio.h>

struct account {
    pthread_mutex_t lock;
    int balance;
};

static struct account a = {PTHREAD_MUTEX_INITIALIZER, 100};
static struct account b = {PTHREAD_MUTEX_INITIALIZER, 100};

static void transfer(struct account *from, struct account *to, int amount)
{
    pthread_mutex_lock(&from->lock);
    pthread_mutex_lock(&to->lock);
    from->balance -= amount;
    to->balance += amount;
    pthread_mutex_unlock(&to->lock);
    pthread_mutex_unlock(&from->lock);
}

static void *a_to_b(void *arg)
{
    (void)arg;
    transfer(&a, &b, 10);
    return NULL;
}

static void *b_to_a(void *arg)
{
    (void)arg;
    transfer(&b, &a, 20);
    return NULL;
}

int main(void)
{
    pthread_t t1, t2;
    pthread_create(&t1, NULL, a_to_b, NULL);
    pthread_create(&t2, NULL, b_to_a, NULL);
    pthread_join(t1, NULL);
    pthread_join(t2, NULL);
    printf("a=%d b=%d\n", a.balance, b.balance);
    return 0;
}
