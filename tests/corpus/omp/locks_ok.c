/* Correct: two accounts guarded by omp locks, taken in one global order by
 * every section; nested sections inside one of them. */
#include <assert.h>
#include <omp.h>
#include <stdio.h>

static omp_lock_t lock_a, lock_b;
static int account_a = 100, account_b = 100;

static void transfer(int amount)
{
    omp_set_lock(&lock_a);
    omp_set_lock(&lock_b);
    account_a -= amount;
    account_b += amount;
    omp_unset_lock(&lock_b);
    omp_unset_lock(&lock_a);
}

int main(void)
{
    omp_init_lock(&lock_a);
    omp_init_lock(&lock_b);
    omp_set_nested(1);
#pragma omp parallel sections num_threads(2)
    {
#pragma omp section
        transfer(10);
#pragma omp section
        {
#pragma omp parallel sections num_threads(2)
            {
#pragma omp section
                transfer(-5);
#pragma omp section
                transfer(20);
            }
        }
    }
    assert(account_a + account_b == 200);
    assert(account_a == 75);
    omp_destroy_lock(&lock_a);
    omp_destroy_lock(&lock_b);
    printf("a %d b %d\n", account_a, account_b);
    return 0;
}
