/* An OpenMP program: libgomp, linked in, reads OMP_NUM_THREADS in its own
 * constructor, which runs before the shim's. Prints the thread count an
 * OpenMP parallel region would use. */
#include <omp.h>
#include <stdio.h>

int main(void)
{
    printf("%d\n", omp_get_max_threads());
    return 0;
}
