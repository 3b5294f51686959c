/* Buggy: two sections take the same two omp locks in opposite orders
 * (a lock-order deadlock in some schedules). */
#include <omp.h>
#include <stdio.h>
#include <unistd.h>

static omp_lock_t a, b;
static int x, y;

int main(void)
{
    omp_init_lock(&a);
    omp_init_lock(&b);
#pragma omp parallel sections num_threads(2)
    {
#pragma omp section
        {
            omp_set_lock(&a);
            usleep(100); /* prepare x */
            omp_set_lock(&b);
            x++;
            omp_unset_lock(&b);
            omp_unset_lock(&a);
        }
#pragma omp section
        {
            omp_set_lock(&b);
            usleep(100); /* prepare y */
            omp_set_lock(&a);
            y++;
            omp_unset_lock(&a);
            omp_unset_lock(&b);
        }
    }
    printf("x %d y %d\n", x, y);
    return 0;
}
