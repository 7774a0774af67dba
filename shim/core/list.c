/* The comma-separated lists policies give (never-pin programs, exempt
 * modules, artifact and input globs), walked one way by every module that
 * reads one.
 */
#include <string.h>

#include "core/core.h"

const char *core_list_next(const char **p, const char *seps, size_t *len)
{
    if (!*p)
        return NULL;
    const char *s = *p + strspn(*p, seps);
    s += strspn(s, " \t");
    if (!*s) {
        *p = s;
        return NULL;
    }
    size_t n = strcspn(s, seps);
    *p = s + n;
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t'))
        n--;
    *len = n;
    return s;
}
