/* Shared by the per-call benchmark programs (bench_overhead, bench_getrandom,
 * bench_cublas): a monotonic clock in nanoseconds and the parsing of their
 * count arguments.
 */
#ifndef BENCH_UTIL_H
#define BENCH_UTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static inline double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* Parses a positive count or exits with status 2, naming the program and
 * the argument. */
static inline long parse_count(const char *prog, const char *s, const char *what)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (*end != '\0' || v <= 0) {
        fprintf(stderr, "%s: %s must be a positive integer, got '%s'\n", prog, what, s);
        exit(2);
    }
    return v;
}

#endif
