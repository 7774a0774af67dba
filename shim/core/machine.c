/* What machine this is, for the trace header (informational, never
 * compared: the canonical kernels give the same bits on any x86-64 CPU,
 * and detverify reports the CPU as a note, docs/verify.md): the CPU's
 * model name, the instruction-set features that choose kernels (as
 * /proc/cpuinfo spells them), and the CPUs this process may run on; and
 * the thread counts [blas] threads = auto resolves to; and whether the CPU
 * and the OS run AVX-512 code, for every module that picks a path by it.
 */
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "core/core.h"

/* 1 if the space-separated `flags` holds `name`. */
static int has_flag(const char *flags, const char *name)
{
    size_t n = strlen(name);
    for (const char *s = flags; (s = strstr(s, name)) != NULL; s += n)
        if ((s == flags || s[-1] == ' ') && (s[n] == ' ' || s[n] == '\n' || !s[n]))
            return 1;
    return 0;
}

void core_machine_describe(char *out, size_t len)
{
    static const char *const features[] = { "sse4_2", "avx", "avx2", "fma", "avx512f",
                                            "avx512bw", "avx512vl", "avx512dq", "avx512_bf16",
                                            "amx_tile", NULL };
    char model[200] = "unknown", isa[200] = "";
    static char line[8192]; /* a flags line is long; called once per process */
    FILE *f = fopen("/proc/cpuinfo", "r");
    int seen_model = 0, seen_flags = 0;
    while (f && !(seen_model && seen_flags) && fgets(line, sizeof line, f)) {
        const char *v = strchr(line, ':');
        v = v ? v + 1 + strspn(v + 1, " \t") : "";
        if (!seen_model && strncmp(line, "model name", 10) == 0) {
            snprintf(model, sizeof model, "%.*s", (int)strcspn(v, "\n;"), v);
            seen_model = 1;
        } else if (!seen_flags && strncmp(line, "flags", 5) == 0) {
            size_t n = 0;
            for (int i = 0; features[i]; i++)
                if (has_flag(v, features[i]) && n + strlen(features[i]) + 2 < sizeof isa)
                    n += (size_t)snprintf(isa + n, sizeof isa - n, "%s%s", n ? "," : "",
                                          features[i]);
            seen_flags = 1;
        }
    }
    if (f)
        fclose(f);
    snprintf(out, len, "model=%s;isa=%s;cores=%d", model, isa, core_cpus_allowed());
}

/* XCR0 through xgetbv, only where CPUID says the OS enabled XSAVE. */
static uint64_t xcr0(void)
{
    uint32_t a, b, c, d;
    __asm__ volatile("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d) : "a"(1), "c"(0));
    if (!(c & (1u << 27))) /* OSXSAVE */
        return 0;
    uint32_t lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    return (uint64_t)hi << 32 | lo;
}

/* AVX-512 needs the instructions (AVX-512F, and DQ/VL/BW which a
 * compiler may use beside it, with AVX2 and FMA) and an OS that saves the
 * zmm state: XCR0 must enable the SSE, AVX, opmask and both zmm halves
 * (bits 1, 2, 5, 6 and 7). */
int core_cpu_has_avx512(void)
{
    const uint64_t state = (1u << 1) | (1u << 2) | (1u << 5) | (1u << 6) | (1u << 7);
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
           __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
           __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bw") &&
           (xcr0() & state) == state;
}

int core_cpus_allowed(void)
{
    cpu_set_t set;
    int n = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 1;
    return n > 0 ? n : 1;
}

int core_canonical_threads(void)
{
    int n = core_cfg.blas_threads ? core_cfg.blas_threads : core_cpus_allowed();
    return n > 256 ? 256 : n;
}

int core_vendor_threads(void)
{
    return core_cfg.blas_threads ? core_cfg.blas_threads : 1;
}
