/* Draws entropy in its own constructor, before main: the trace header is
 * then written from a constructor, when the loader has not yet reached
 * the program's main. Prints 1 if the draw succeeded.
 */
#include <stdio.h>
#include <sys/random.h>

static unsigned long long early;

__attribute__((constructor)) static void draw(void)
{
    if (getrandom(&early, sizeof early, 0) != (ssize_t)sizeof early)
        early = 0;
}

int main(void)
{
    printf("%d\n", early != 0);
    return 0;
}
