/* What framework.c (records of host tensors) shares with
 * framework_cuda.c (step records of device tensors): private to
 * shim/framework.
 */
#ifndef DETSHIM_FRAMEWORK_FRAMEWORK_H
#define DETSHIM_FRAMEWORK_FRAMEWORK_H

#include <stdint.h>

#include "trace/digest.h"

#define FW_NAME_MAX 200 /* bytes of a tensor name kept; the format cuts at 255 */

/* One tensor: where it lies, and its shape for the digest. */
struct fw_job {
    const void *data;
    struct digest_shape shape;
    uint64_t count; /* logical elements; 0 digests no bytes */
};

/* Checks one tensor's description and fills j: `ndims` dims of `shape`
 * with `strides` in elements (never negative; 0 dims is a scalar),
 * elements of elem_size bytes at data. Returns 0, or -1 for a shape
 * digest.h cannot walk (the caller passes a contiguous copy as one dim). */
int fw_describe(struct fw_job *j, const void *data, int64_t elem_size, int ndims,
                const int64_t *shape, const int64_t *strides);
/* digest_strided(data, s) of a host tensor. */
detshim_digest fw_digest(const void *data, const struct digest_shape *s);
/* 1 when this thread may record now (and takes the guard), else 0. */
int fw_enter(void);

#endif
