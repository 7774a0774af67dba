/* Logging and fatal configuration errors. Every message is one line on
 * stderr starting with "detshim: ", written with a single write(2) so lines
 * from several processes never interleave mid-line.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "core/core.h"

static void log_line(const char *suffix, const char *fmt, va_list ap)
{
    char line[1024];
    int n = snprintf(line, sizeof line, "detshim: ");
    n += vsnprintf(line + n, sizeof line - (size_t)n, fmt, ap);
    if (n > (int)sizeof line - 64)
        n = (int)sizeof line - 64;
    n += snprintf(line + n, sizeof line - (size_t)n, "%s\n", suffix);
    ssize_t w = write(STDERR_FILENO, line, (size_t)n);
    (void)w;
}

void core_log(int level, const char *fmt, ...)
{
    if (core_cfg.log_level < level)
        return;
    va_list ap;
    va_start(ap, fmt);
    log_line("", fmt, ap);
    va_end(ap);
}

void core_fail(const char *what_is_disabled, const char *fmt, ...)
{
    char suffix[256];
    va_list ap;
    va_start(ap, fmt);
    if (core_cfg.on_error == ON_ERROR_WARN) {
        snprintf(suffix, sizeof suffix, " (DETSHIM_ON_ERROR=warn: continuing without %s)",
                 what_is_disabled);
        log_line(suffix, fmt, ap);
        va_end(ap);
        return;
    }
    log_line("", fmt, ap);
    va_end(ap);
    _exit(2);
}
