/* A fake cuRAND (libcurand.so.10) for tests: value i of a generator is a
 * hash of (seed, i), on host memory for host and "device" generators
 * alike. Seeds are honoured (default 0, as cuRAND's); the ordering is
 * not: with any ordering but LEGACY, the stream is also keyed by a per-run
 * seed (fake.h), standing in for orderings that may change with the
 * device and the library version, so only LEGACY reproduces.
 */
#include "fake.h"

struct curandGenerator_st {
    int type, host, ordering;
    unsigned long long seed;
    uint64_t offset;
};

static curandStatus_t create(curandGenerator_t *g, curandRngType_t type, int host)
{
    *g = calloc(1, sizeof **g);
    if (!*g)
        return 102; /* CURAND_STATUS_ALLOCATION_FAILED */
    (*g)->type = type;
    (*g)->host = host;
    (*g)->ordering = CURAND_ORDERING_PSEUDO_DEFAULT;
    return CURAND_STATUS_SUCCESS;
}

FAKE_EXPORT curandStatus_t curandCreateGenerator(curandGenerator_t *g, curandRngType_t type)
{
    return create(g, type, 0);
}

FAKE_EXPORT curandStatus_t curandCreateGeneratorHost(curandGenerator_t *g, curandRngType_t type)
{
    return create(g, type, 1);
}

FAKE_EXPORT curandStatus_t curandSetPseudoRandomGeneratorSeed(curandGenerator_t g,
                                                              unsigned long long seed)
{
    g->seed = seed;
    g->offset = 0;
    return CURAND_STATUS_SUCCESS;
}

FAKE_EXPORT curandStatus_t curandSetGeneratorOrdering(curandGenerator_t g, curandOrdering_t order)
{
    if (order < CURAND_ORDERING_PSEUDO_BEST || order > CURAND_ORDERING_PSEUDO_DYNAMIC)
        return 104; /* CURAND_STATUS_OUT_OF_RANGE */
    g->ordering = order;
    return CURAND_STATUS_SUCCESS;
}

FAKE_EXPORT curandStatus_t curandGenerateUniform(curandGenerator_t g, float *out, size_t n)
{
    uint64_t key = g->seed ^ (g->ordering == CURAND_ORDERING_PSEUDO_LEGACY ? 0 : fake_run_seed());
    for (size_t i = 0; i < n; i++)
        out[i] = (float)((fake_mix(key ^ fake_mix(g->offset + i)) >> 40) + 1) / 16777217.0f;
    g->offset += n;
    return CURAND_STATUS_SUCCESS;
}
