/* cuRAND host-API interceptors. A generator's output is fixed by its seed,
 * offset and ordering; the default ordering may change with the device and
 * the library version. In pinned mode every pseudo-random generator gets
 * CURAND_ORDERING_PSEUDO_LEGACY (guaranteed the same across releases) and
 * a seed derived from the policy's seed, like every other pinned source of
 * randomness: the rng module's stream for source "curand", whose ordinal
 * is the generator's creation order in the process. A program's own
 * curandSetPseudoRandomGeneratorSeed or curandSetGeneratorOrdering is
 * overridden with these. The seed the program asked for is logged (at
 * DETSHIM_LOG=info), not traced: a program seeding from the clock would
 * otherwise make two pinned runs differ in their traces while their
 * results agree. Generation calls are traced with their distribution's
 * parameters and output digests; curandGenerateSeeds with its status.
 */
#include <pthread.h>
#include <stdio.h>

#include "core/core.h"
#include "cuda/cuda.h"
#include "trace/digest.h"
#include "rng/rng.h"

/* Generators we pinned, so a later seed call gets the same pinned seed
 * and generation knows host from device memory. */
#define MAX_GENERATORS 256
static struct generator {
    curandGenerator_t g;
    unsigned long long seed;
    int host, pseudo;
    cudaStream_t stream; /* curandSetStream's, where generation runs */
} generators[MAX_GENERATORS];
static int ngenerators;
static pthread_mutex_t generators_lock = PTHREAD_MUTEX_INITIALIZER;

/* A copy of g's entry; 0 if g is not known (created before us, or one
 * past MAX_GENERATORS). */
static int generator_get(curandGenerator_t g, struct generator *out)
{
    int found = 0;
    pthread_mutex_lock(&generators_lock);
    for (int i = 0; i < ngenerators && !found; i++)
        if (generators[i].g == g) {
            *out = generators[i];
            found = 1;
        }
    pthread_mutex_unlock(&generators_lock);
    return found;
}

static void generator_put(const struct generator *gen)
{
    pthread_mutex_lock(&generators_lock);
    int slot = ngenerators;
    for (int i = 0; i < ngenerators; i++)
        if (generators[i].g == gen->g)
            slot = i; /* an address reused after curandDestroyGenerator */
    if (slot < MAX_GENERATORS) {
        generators[slot] = *gen;
        if (slot == ngenerators)
            ngenerators++;
    }
    pthread_mutex_unlock(&generators_lock);
}

/* The stream of a known generator, or NULL (cuRAND's default). */
static void generator_set_stream(curandGenerator_t g, cudaStream_t stream)
{
    pthread_mutex_lock(&generators_lock);
    for (int i = 0; i < ngenerators; i++)
        if (generators[i].g == g)
            generators[i].stream = stream;
    pthread_mutex_unlock(&generators_lock);
}

static curandStatus_t real_seed(curandGenerator_t g, unsigned long long seed)
{
    CUDA_REAL_FN(curandSetPseudoRandomGeneratorSeed_fn *, curandSetPseudoRandomGeneratorSeed);
    return real(g, seed);
}

static curandStatus_t real_ordering(curandGenerator_t g, int order)
{
    CUDA_REAL_FN(curandSetGeneratorOrdering_fn *, curandSetGeneratorOrdering);
    return real(g, order);
}

static int is_pseudo(int type)
{
    return type >= CURAND_RNG_PSEUDO_DEFAULT && type < CURAND_RNG_QUASI_DEFAULT;
}

/* Creation, host or device: pins a pseudo generator and records it. */
static curandStatus_t create(const char *api, curandCreateGenerator_fn *real,
                             curandGenerator_t *g, curandRngType_t type, int host)
{
    struct cuda_call c;
    if (!cuda_enter(&c))
        return real(g, type);
    curandStatus_t st = real(g, type);
    struct generator gen = { st == CURAND_STATUS_SUCCESS ? *g : NULL, 0, host, is_pseudo(type),
                             NULL };
    const char *ordering = "library default", *seeded = "library default";
    char seed_text[32];
    if (st == CURAND_STATUS_SUCCESS && c.pinned && gen.pseudo &&
        rng_fill(RNG_CURAND, &gen.seed, sizeof gen.seed) == 0) {
        ordering = real_ordering(*g, CURAND_ORDERING_PSEUDO_LEGACY) == CURAND_STATUS_SUCCESS
                       ? "legacy" : "legacy refused by cuRAND (not pinned)";
        snprintf(seed_text, sizeof seed_text, "%llu", gen.seed);
        seeded = real_seed(*g, gen.seed) == CURAND_STATUS_SUCCESS
                     ? seed_text : "refused by cuRAND (not pinned)";
        generator_put(&gen);
    } else if (st == CURAND_STATUS_SUCCESS) {
        gen.seed = 0;
        generator_put(&gen);
    }
    if (c.traced) {
        struct trace_rec r;
        trace_rec_begin(&r, api);
        trace_rec_int(&r, "rng_type", type);
        trace_rec_int(&r, "status", st);
        cuda_note_mode(&r, &c);
        trace_rec_note(&r, "cuda.ordering", ordering);
        trace_rec_note(&r, "cuda.seed", seeded);
        cuda_commit(&r);
    }
    cuda_leave();
    return st;
}

DETSHIM_EXPORT curandStatus_t curandCreateGenerator(curandGenerator_t *g, curandRngType_t type)
{
    CUDA_REAL_FN(curandCreateGenerator_fn *, curandCreateGenerator);
    return create("curandCreateGenerator", real, g, type, 0);
}

DETSHIM_EXPORT curandStatus_t curandCreateGeneratorHost(curandGenerator_t *g,
                                                        curandRngType_t type)
{
    CUDA_REAL_FN(curandCreateGeneratorHost_fn *, curandCreateGeneratorHost);
    return create("curandCreateGeneratorHost", real, g, type, 1);
}

DETSHIM_EXPORT curandStatus_t curandSetPseudoRandomGeneratorSeed(curandGenerator_t g,
                                                                 unsigned long long seed)
{
    CUDA_REAL_FN(curandSetPseudoRandomGeneratorSeed_fn *, curandSetPseudoRandomGeneratorSeed);
    struct cuda_call c;
    if (!cuda_enter(&c))
        return real(g, seed);
    struct generator gen;
    int pin = c.pinned && generator_get(g, &gen) && gen.pseudo;
    unsigned long long applied = pin ? gen.seed : seed;
    if (pin && applied != seed)
        core_log(DS_LOG_INFO, "curandSetPseudoRandomGeneratorSeed(%llu) replaced by the pinned "
                 "seed %llu", seed, applied);
    curandStatus_t st = real(g, applied);
    if (c.traced) {
        struct trace_rec r;
        trace_rec_begin(&r, "curandSetPseudoRandomGeneratorSeed");
        trace_rec_int(&r, "seed", (int64_t)applied);
        trace_rec_int(&r, "status", st);
        cuda_note_mode(&r, &c);
        if (pin)
            trace_rec_note(&r, "cuda.override",
                           "seed->pinned seed (the program's seed is logged, not traced)");
        cuda_commit(&r);
    }
    cuda_leave();
    return st;
}

DETSHIM_EXPORT curandStatus_t curandSetGeneratorOrdering(curandGenerator_t g,
                                                         curandOrdering_t order)
{
    CUDA_REAL_FN(curandSetGeneratorOrdering_fn *, curandSetGeneratorOrdering);
    struct cuda_call c;
    if (!cuda_enter(&c))
        return real(g, order);
    struct generator gen;
    int pin = c.pinned && generator_get(g, &gen) && gen.pseudo;
    int applied = pin ? CURAND_ORDERING_PSEUDO_LEGACY : order;
    curandStatus_t st = real(g, applied);
    if (c.traced) {
        struct trace_rec r;
        trace_rec_begin(&r, "curandSetGeneratorOrdering");
        trace_rec_int(&r, "order", order);
        trace_rec_int(&r, "status", st);
        cuda_note_mode(&r, &c);
        if (applied != (int)order)
            trace_rec_note(&r, "cuda.override", "ordering->legacy");
        cuda_commit(&r);
    }
    cuda_leave();
    return st;
}

/* Not traced: only remembered, so generation output is digested after the
 * work on the generator's own stream. */
DETSHIM_EXPORT curandStatus_t curandSetStream(curandGenerator_t g, cudaStream_t stream)
{
    CUDA_REAL_FN(curandSetStream_fn *, curandSetStream);
    curandStatus_t st = real(g, stream);
    if (st == CURAND_STATUS_SUCCESS)
        generator_set_stream(g, stream);
    return st;
}

/* A distribution's parameters, as the call passed them (NULL names: none),
 * recorded in this order: an integer (the binomial's number of trials),
 * two reals, and the method of a *Method form. */
struct dist {
    const char *pi, *pa, *pb, *pm;
    int64_t i, m;
    double a, b;
};

/* The note of a call on a generator created before detshim was loaded. */
static void note_unknown(struct trace_rec *r)
{
    trace_rec_note(r, "cuda.generator", "created before detshim saw it: not pinned");
}

/* Records a generation call: n values of `elem` bytes at out, drawn with
 * the distribution parameters d (part of the call: a changed mean gives
 * other values from the same inputs). */
static void rec_generate(const struct cuda_call *c, const char *api, curandGenerator_t g,
                         const void *out, size_t n, int elem, struct dist d, curandStatus_t st)
{
    if (!c->traced)
        return;
    struct generator gen = { .host = 0 };
    int known = generator_get(g, &gen);
    struct trace_rec r;
    trace_rec_begin(&r, api);
    trace_rec_int(&r, "n", (int64_t)n);
    if (d.pi)
        trace_rec_int(&r, d.pi, d.i);
    if (d.pa)
        trace_rec_f64(&r, d.pa, d.a);
    if (d.pb)
        trace_rec_f64(&r, d.pb, d.b);
    if (d.pm)
        trace_rec_int(&r, d.pm, d.m);
    trace_rec_int(&r, "status", st);
    uint64_t count = st == CURAND_STATUS_SUCCESS ? n : 0;
    if (st != CURAND_STATUS_SUCCESS)
        trace_rec_operand(&r, "out", TRACE_ROLE_OUT, digest_bytes(NULL, 0), count, elem);
    else if (gen.host)
        trace_rec_operand(&r, "out", TRACE_ROLE_OUT, digest_bytes(out, n * (size_t)elem), count,
                          elem);
    else if (cuda_rec_bytes(&r, "out", TRACE_ROLE_OUT, gen.stream, out, n * (size_t)elem, count,
                            elem) != 0) {
        cuda_note_no_digest(&r);
        trace_rec_operand(&r, "out", TRACE_ROLE_OUT, digest_bytes(NULL, 0), count, elem);
    }
    cuda_note_mode(&r, c);
    if (!known)
        note_unknown(&r);
    cuda_commit(&r);
}

/* An interceptor for curandGenerate<NAME>(generator, out, n, ARGS...):
 * calls the real one, then records n values of ELEM bytes with DIST. The
 * generator's seed and ordering were pinned where it was created. */
#define CURAND_GENERATE(NAME, OUT_T, ELEM, PARAMS, ARGS, DIST)                            \
    DETSHIM_EXPORT curandStatus_t curandGenerate##NAME(curandGenerator_t g, OUT_T *out,  \
                                                         size_t n PARAMS)                 \
    {                                                                                      \
        CUDA_REAL_FN(curandGenerate##NAME##_fn *, curandGenerate##NAME);                        \
        struct cuda_call c;                                                                \
        if (!cuda_enter(&c))                                                               \
            return real(g, out, n ARGS);                                                   \
        curandStatus_t st = real(g, out, n ARGS);                                          \
        rec_generate(&c, "curandGenerate" #NAME, g, out, n, ELEM, DIST, st);               \
        cuda_leave();                                                                      \
        return st;                                                                         \
    }

#define NO_DIST ((struct dist){ 0 })
#define MEAN_SD ((struct dist){ .pa = "mean", .pb = "stddev", .a = mean, .b = stddev })
#define POISSON(M) ((struct dist){ .pa = "lambda", .a = lambda, M })
#define BINOMIAL(M) ((struct dist){ .pi = "trials", .i = trials, .pa = "p", .a = p, M })
#define METHOD .pm = "method", .m = method
#define COMMA ,

CURAND_GENERATE(, unsigned int, 4, , , NO_DIST)
CURAND_GENERATE(LongLong, unsigned long long, 8, , , NO_DIST)
CURAND_GENERATE(Uniform, float, 4, , , NO_DIST)
CURAND_GENERATE(UniformDouble, double, 8, , , NO_DIST)
CURAND_GENERATE(Normal, float, 4, COMMA float mean COMMA float stddev, COMMA mean COMMA stddev,
                MEAN_SD)
CURAND_GENERATE(NormalDouble, double, 8, COMMA double mean COMMA double stddev,
                COMMA mean COMMA stddev, MEAN_SD)
CURAND_GENERATE(LogNormal, float, 4, COMMA float mean COMMA float stddev, COMMA mean COMMA stddev,
                MEAN_SD)
CURAND_GENERATE(LogNormalDouble, double, 8, COMMA double mean COMMA double stddev,
                COMMA mean COMMA stddev, MEAN_SD)
CURAND_GENERATE(Poisson, unsigned int, 4, COMMA double lambda, COMMA lambda, POISSON())
CURAND_GENERATE(PoissonMethod, unsigned int, 4, COMMA double lambda COMMA curandMethod_t method,
                COMMA lambda COMMA method, POISSON(METHOD))
/* curand.h names the count `num` and the trials `n` here; the record keeps
 * `n` for the count, as in every generation record, and says `trials`. */
CURAND_GENERATE(Binomial, unsigned int, 4, COMMA unsigned int trials COMMA double p,
                COMMA trials COMMA p, BINOMIAL())
CURAND_GENERATE(BinomialMethod, unsigned int, 4,
                COMMA unsigned int trials COMMA double p COMMA curandMethod_t method,
                COMMA trials COMMA p COMMA method, BINOMIAL(METHOD))

/* Sets up the generator's starting state: no output, but traced so the
 * record stream shows the call. */
DETSHIM_EXPORT curandStatus_t curandGenerateSeeds(curandGenerator_t g)
{
    CUDA_REAL_FN(curandGenerateSeeds_fn *, curandGenerateSeeds);
    struct cuda_call c;
    if (!cuda_enter(&c))
        return real(g);
    curandStatus_t st = real(g);
    if (c.traced) {
        struct generator gen;
        struct trace_rec r;
        trace_rec_begin(&r, "curandGenerateSeeds");
        trace_rec_int(&r, "status", st);
        cuda_note_mode(&r, &c);
        if (!generator_get(g, &gen))
            note_unknown(&r);
        cuda_commit(&r);
    }
    cuda_leave();
    return st;
}
