/* Creates no thread: poscheck warns that nothing will be scheduled. */
#include <stdio.h>
int main(void) {
    puts("hello");
    return 0;
}
