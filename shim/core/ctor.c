/* The library's constructor and destructor: the top of the start-up flow.
 * Starting eagerly makes a bad policy or trace directory stop the program
 * before it does any work; intercepted calls that arrive earlier (from
 * another library's constructor) start the same way, lazily. Kept apart so
 * unit tests can link the shim's objects without starting a shim.
 */
#include "artifact/artifact.h"
#include "detshim/core.h"
#include "detshim/cuda.h"
#include "detshim/trace.h"

__attribute__((constructor)) static void detshim_ctor(void)
{
    trace_on_exit(artifact_at_exit);
    trace_on_exit(artifact_record_objects);
    trace_start();
    cuda_reach_start();
}

__attribute__((destructor)) static void detshim_dtor(void)
{
    cuda_reach_check();
    trace_process_flush_all();
}
