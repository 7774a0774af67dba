/* Elements of NCCL's data types, one reduction step at a time: the size
 * of each type, and acc = acc (op) x for the built-in operators, rounded
 * to the type after every step as NCCL's kernels round after every hop.
 * Floating types are combined in double and rounded once to the type:
 * double has more than twice the precision of float, half and bfloat16
 * plus two bits, so this is bit for bit the type's own arithmetic.
 * Integers wrap. Used by the canonical collectives (shim/nccl/canonical.c)
 * and by the fake libnccl (tests/fakes/nccl), so both sum alike.
 */
#ifndef DETSHIM_NCCL_ELEM_H
#define DETSHIM_NCCL_ELEM_H

#include <stdint.h>
#include <string.h>

#include "nccl/nccl_api.h"

/* Bytes per element; 0 for a type we do not know. */
static inline size_t nccl_type_size(int t)
{
    switch (t) {
    case ncclInt8: case ncclUint8: case ncclFloat8e4m3: case ncclFloat8e5m2:
        return 1;
    case ncclFloat16: case ncclBfloat16:
        return 2;
    case ncclInt32: case ncclUint32: case ncclFloat32:
        return 4;
    case ncclInt64: case ncclUint64: case ncclFloat64:
        return 8;
    default:
        return 0;
    }
}

/* 1 for the types whose sums depend on their order (float8 is not
 * combined here: nccl_elem_combine returns -1 for it). */
static inline int nccl_type_is_float(int t)
{
    return t == ncclFloat16 || t == ncclFloat32 || t == ncclFloat64 || t == ncclBfloat16;
}

static inline double nccl_elem_load_f(int t, const void *p)
{
    switch (t) {
    case ncclFloat16: {
        _Float16 h;
        memcpy(&h, p, 2);
        return (double)h;
    }
    case ncclBfloat16: {
        uint16_t b;
        memcpy(&b, p, 2);
        uint32_t u = (uint32_t)b << 16;
        float f;
        memcpy(&f, &u, 4);
        return f;
    }
    case ncclFloat32: {
        float f;
        memcpy(&f, p, 4);
        return f;
    }
    default: {
        double d;
        memcpy(&d, p, 8);
        return d;
    }
    }
}

static inline void nccl_elem_store_f(int t, void *p, double v)
{
    switch (t) {
    case ncclFloat16: {
        _Float16 h = (_Float16)v;
        memcpy(p, &h, 2);
        return;
    }
    case ncclBfloat16: {
        /* double -> float is exact enough (innocuous double rounding);
         * float -> bfloat16 rounds to nearest even, NaN kept quiet. */
        float f = (float)v;
        uint32_t u;
        memcpy(&u, &f, 4);
        uint16_t b = (u & 0x7fffffffu) > 0x7f800000u
                         ? (uint16_t)((u >> 16) | 0x40)
                         : (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
        memcpy(p, &b, 2);
        return;
    }
    case ncclFloat32: {
        float f = (float)v;
        memcpy(p, &f, 4);
        return;
    }
    default:
        memcpy(p, &v, 8);
    }
}

/* Integer elements, widened with their sign. */
static inline uint64_t nccl_elem_load_i(int t, const void *p)
{
    switch (t) {
    case ncclInt8: { int8_t v; memcpy(&v, p, 1); return (uint64_t)(int64_t)v; }
    case ncclUint8: { uint8_t v; memcpy(&v, p, 1); return v; }
    case ncclInt32: { int32_t v; memcpy(&v, p, 4); return (uint64_t)(int64_t)v; }
    case ncclUint32: { uint32_t v; memcpy(&v, p, 4); return v; }
    default: { uint64_t v; memcpy(&v, p, 8); return v; }
    }
}

static inline int nccl_type_signed(int t)
{
    return t == ncclInt8 || t == ncclInt32 || t == ncclInt64;
}

/* acc = acc (op) x for one element of type t at acc and x; avg sums (the
 * caller divides at the end, nccl_elem_finish). Returns 0, or -1 for a
 * type or operator it does not know. */
static inline int nccl_elem_combine(int t, int op, void *acc, const void *x)
{
    if (nccl_type_is_float(t)) {
        double a = nccl_elem_load_f(t, acc), b = nccl_elem_load_f(t, x), r;
        switch (op) {
        case ncclSum: case ncclAvg: r = a + b; break;
        case ncclProd: r = a * b; break;
        case ncclMax: r = a >= b || a != a ? a : b; break;
        case ncclMin: r = a <= b || a != a ? a : b; break;
        default: return -1;
        }
        nccl_elem_store_f(t, acc, r);
        return 0;
    }
    size_t n = nccl_type_size(t);
    if (n == 0 || t == ncclFloat8e4m3 || t == ncclFloat8e5m2)
        return -1;
    uint64_t a = nccl_elem_load_i(t, acc), b = nccl_elem_load_i(t, x), r;
    int sgn = nccl_type_signed(t);
    switch (op) {
    case ncclSum: case ncclAvg: r = a + b; break;
    case ncclProd: r = a * b; break;
    case ncclMax: r = sgn ? ((int64_t)a >= (int64_t)b ? a : b) : (a >= b ? a : b); break;
    case ncclMin: r = sgn ? ((int64_t)a <= (int64_t)b ? a : b) : (a <= b ? a : b); break;
    default: return -1;
    }
    memcpy(acc, &r, n); /* little-endian: the low bytes */
    return 0;
}

/* After the last step: avg divides by nranks (floats in the type's
 * precision, integers truncating); other operators leave acc. */
static inline void nccl_elem_finish(int t, int op, void *acc, int nranks)
{
    if (op != ncclAvg)
        return;
    if (nccl_type_is_float(t)) {
        nccl_elem_store_f(t, acc, nccl_elem_load_f(t, acc) / nranks);
        return;
    }
    uint64_t a = nccl_elem_load_i(t, acc);
    uint64_t r = nccl_type_signed(t) ? (uint64_t)((int64_t)a / nranks) : a / (uint64_t)nranks;
    memcpy(acc, &r, nccl_type_size(t));
}

#endif
