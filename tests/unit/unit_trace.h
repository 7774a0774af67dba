/* Starting a real trace inside a unit test program: the writer's own
 * start-up, into a fresh directory, as the shim's constructor would with
 * DETSHIM_TRACE set. For the tests that write a trace and read it back.
 */
#ifndef DETSHIM_UNIT_TRACE_H
#define DETSHIM_UNIT_TRACE_H

#include <stdio.h>
#include <stdlib.h>

#include "core/core.h"
#include "core/lineage.h"
#include "trace/trace.h"

/* Makes dir (a mkdtemp template, changed in place) and starts the trace
 * there, under policy "unit", with `frames` call-site frames per record.
 * Returns 0, or -1. */
static inline int unit_trace_start(char *dir, int frames)
{
    if (!mkdtemp(dir))
        return -1;
    unsetenv("DETSHIM_LINEAGE");
    unsetenv("RANK");
    snprintf(core_cfg.trace_dir, sizeof core_cfg.trace_dir, "%s", dir);
    snprintf(core_cfg.policy_name, sizeof core_cfg.policy_name, "unit");
    snprintf(core_cfg.policy_digest, sizeof core_cfg.policy_digest, "none");
    core_cfg.trace_on = 1;
    core_cfg.trace_frames = frames;
    char err[512];
    lineage_start();
    return trace_process_start(err, sizeof err);
}

#endif
