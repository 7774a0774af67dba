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

/* Value i of the generator's stream, uniform in (0, 1) with 53 bits. */
static double next_uniform(curandGenerator_t g, size_t i)
{
    uint64_t key = g->seed ^ (g->ordering == CURAND_ORDERING_PSEUDO_LEGACY ? 0 : fake_run_seed());
    return (double)((fake_mix(key ^ fake_mix(g->offset + i)) >> 11) + 1) / 9007199254740993.0;
}

FAKE_EXPORT curandStatus_t curandGenerateUniform(curandGenerator_t g, float *out, size_t n)
{
    uint64_t key = g->seed ^ (g->ordering == CURAND_ORDERING_PSEUDO_LEGACY ? 0 : fake_run_seed());
    for (size_t i = 0; i < n; i++)
        out[i] = (float)((fake_mix(key ^ fake_mix(g->offset + i)) >> 40) + 1) / 16777217.0f;
    g->offset += n;
    return CURAND_STATUS_SUCCESS;
}

/* Not a normal distribution: a value that depends on the stream, the mean
 * and the deviation, which is all the tests need. */
FAKE_EXPORT curandStatus_t curandGenerateNormalDouble(curandGenerator_t g, double *out, size_t n,
                                                      double mean, double stddev)
{
    for (size_t i = 0; i < n; i++)
        out[i] = mean + stddev * (next_uniform(g, i) - 0.5);
    g->offset += n;
    return CURAND_STATUS_SUCCESS;
}

/* The generators below, and their *Method forms, which accept only
 * CURAND_CHOOSE_BEST and change nothing. Static, so a Method form does not
 * call back through the exported (and intercepted) symbol. */
static curandStatus_t poisson(curandGenerator_t g, unsigned int *out, size_t n, double lambda)
{
    for (size_t i = 0; i < n; i++)
        out[i] = (unsigned int)(2 * lambda * next_uniform(g, i));
    g->offset += n;
    return CURAND_STATUS_SUCCESS;
}

/* Not a binomial distribution either: a value in [0, trials] that depends
 * on the stream, the trials and p. */
static curandStatus_t binomial(curandGenerator_t g, unsigned int *out, size_t num,
                               unsigned int trials, double p)
{
    if (p < 0 || p > 1)
        return 104; /* CURAND_STATUS_OUT_OF_RANGE */
    for (size_t i = 0; i < num; i++) {
        double v = 2 * p * trials * next_uniform(g, i);
        out[i] = v < trials ? (unsigned int)v : trials;
    }
    g->offset += num;
    return CURAND_STATUS_SUCCESS;
}

FAKE_EXPORT curandStatus_t curandGeneratePoisson(curandGenerator_t g, unsigned int *out, size_t n,
                                                 double lambda)
{
    return poisson(g, out, n, lambda);
}

FAKE_EXPORT curandStatus_t curandGeneratePoissonMethod(curandGenerator_t g, unsigned int *out,
                                                       size_t n, double lambda,
                                                       curandMethod_t method)
{
    return method == CURAND_CHOOSE_BEST ? poisson(g, out, n, lambda)
                                        : 104; /* CURAND_STATUS_OUT_OF_RANGE */
}

FAKE_EXPORT curandStatus_t curandGenerateBinomial(curandGenerator_t g, unsigned int *out,
                                                  size_t num, unsigned int trials, double p)
{
    return binomial(g, out, num, trials, p);
}

FAKE_EXPORT curandStatus_t curandGenerateBinomialMethod(curandGenerator_t g, unsigned int *out,
                                                        size_t num, unsigned int trials,
                                                        double p, curandMethod_t method)
{
    return method == CURAND_CHOOSE_BEST ? binomial(g, out, num, trials, p)
                                        : 104; /* CURAND_STATUS_OUT_OF_RANGE */
}

/* The starting state is the seed itself here: nothing to set up. */
FAKE_EXPORT curandStatus_t curandGenerateSeeds(curandGenerator_t g)
{
    (void)g;
    return CURAND_STATUS_SUCCESS;
}
