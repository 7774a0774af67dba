/* Python call sites: the innermost Python frame (file:line function) of the
 * thread that made an intercepted call, recorded as one more call-site
 * frame beside the native ones (docs/tracing.md#python-call-sites). The
 * calling thread usually released the GIL inside the framework's op, so
 * nothing here calls into the interpreter: the thread's state is found
 * with PyGILState_GetThisThreadState (a thread-specific-data read), and its
 * frame stack, code object, strings and line table are read through the
 * CPython 3.11 layouts of pysite_layout.h. Only this thread changes its own
 * frames, and it is inside our call, so they hold still while we read.
 * The interpreter's symbols are looked up once with dlsym, in the main
 * program (a static python3) or a loaded libpython; the shim never links
 * libpython. Other versions get no Python site, said in the trace header,
 * as does DETSHIM_PYTHON_SITES=off.
 *
 * A frame is (module TRACE_PYTHON_MODULE, offset XXH3_64 of its text),
 * described once per thread in a SITE frame: module name "FILE:LINE",
 * symbol the function's qualified name. FILE is relative to the sys.path
 * entry it came from (the script's directory, site-packages or
 * dist-packages, the standard library, detshim's own start-up hook), so
 * the root does not change with the working directory or the install
 * prefix, the program's or detshim's.
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "core/core.h"
#include "core/policy.h"
#include "trace/pysite_layout.h"
#include "trace/trace.h"
#include "trace/trace_internal.h"

enum py_state { PY_ABSENT, PY_OK, PY_UNSUPPORTED, PY_OFF };

static struct {
    enum py_state state;
    unsigned long version; /* PY_VERSION_HEX, 0 if unknown */
    void *(*this_thread_state)(void);
    int (*is_initialized)(void);
    int (*is_finalizing)(void);
    char script_dir[PATH_MAX]; /* normalized; "" if none (-c, stdin) */
    char hook_dir[PATH_MAX];   /* detshim's own start-up hook; "" if none */
} py;
static pthread_once_t py_once = PTHREAD_ONCE_INIT;
static _Atomic int py_resolved; /* py_resolve has run: every commit asks */

static const void *ld_ptr(const void *base, size_t off)
{
    const void *p;
    memcpy(&p, (const char *)base + off, sizeof p);
    return p;
}

static int ld_int(const void *base, size_t off)
{
    int v;
    memcpy(&v, (const char *)base + off, sizeof v);
    return v;
}

size_t pysite_normalize(const char *in, char *out, size_t cap)
{
    if (cap == 0)
        return 0;
    if (in[0] != '/') { /* "<frozen ...>", "<string>": as written */
        snprintf(out, cap, "%s", in);
        return strlen(out);
    }
    size_t n = 0;
    const char *p = in;
    while (*p) {
        while (*p == '/')
            p++;
        const char *end = strchrnul(p, '/');
        size_t len = (size_t)(end - p);
        if (len == 0 || (len == 1 && p[0] == '.')) {
            /* nothing */
        } else if (len == 2 && p[0] == '.' && p[1] == '.') {
            while (n > 0 && out[n - 1] != '/')
                n--;
            if (n > 0)
                n--; /* the slash before it */
        } else if (n + 1 + len < cap) {
            out[n++] = '/';
            memcpy(out + n, p, len);
            n += len;
        }
        p = end;
    }
    if (n == 0 && cap > 1)
        out[n++] = '/';
    out[n] = 0;
    return n;
}

/* The part of path below dir, or NULL when it is not inside dir (or dir
 * is "" or "/"). */
static const char *inside(const char *path, const char *dir)
{
    size_t d = strlen(dir);
    return d > 1 && strncmp(path, dir, d) == 0 && path[d] == '/' ? path + d + 1 : NULL;
}

const char *pysite_relative(const char *path, const char *hook_dir, const char *script_dir)
{
    /* detshim's own hook first, wherever detshim is installed. */
    const char *in = inside(path, hook_dir);
    if (in)
        return in;
    /* Packages next: a virtual environment inside the project is found
     * through its site-packages entry, not the script's directory. */
    const char *best = NULL;
    static const char *const pkgs[] = { "/site-packages/", "/dist-packages/" };
    for (int i = 0; i < 2; i++)
        for (const char *s = strstr(path, pkgs[i]); s; s = strstr(s + 1, pkgs[i]))
            if (!best || s + strlen(pkgs[i]) > best)
                best = s + strlen(pkgs[i]);
    if (best)
        return best;
    in = inside(path, script_dir);
    if (in)
        return in;
    /* The standard library: .../lib/pythonX.Y/ */
    const char *lib = strstr(path, "/lib/python3");
    if (lib) {
        const char *slash = strchr(lib + 5, '/');
        if (slash && slash[1])
            return slash + 1;
    }
    return path;
}

/* Reads the i-th unsigned varint of 6-bit chunks (bit 6: more follow) at
 * *p; -1 when the table ends first. */
static int read_varint(const uint8_t **p, const uint8_t *end, unsigned *out)
{
    unsigned v = 0;
    for (int shift = 0; *p < end && shift < 32; shift += 6) {
        uint8_t b = *(*p)++;
        v |= (unsigned)(b & 63) << shift;
        if (!(b & 64)) {
            *out = v;
            return 0;
        }
    }
    return -1;
}

static int read_svarint(const uint8_t **p, const uint8_t *end, int *out)
{
    unsigned u;
    if (read_varint(p, end, &u) != 0)
        return -1;
    *out = (u & 1) ? -(int)(u >> 1) : (int)(u >> 1);
    return 0;
}

int pysite_line_at(const uint8_t *table, size_t len, int firstlineno, int lasti)
{
    const uint8_t *p = table, *end = table + len;
    int line = firstlineno, addr = 0;
    while (p < end) {
        uint8_t first = *p++;
        if (!(first & 0x80))
            return -1; /* not the start of an entry: not a 3.11 table */
        int code = (first >> 3) & 15, units = (first & 7) + 1, delta = 0, none = 0;
        unsigned skip;
        switch (code) {
        case 15: /* no location */
            none = 1;
            break;
        case 14: /* long form: line delta, end line, column, end column */
            if (read_svarint(&p, end, &delta) != 0 || read_varint(&p, end, &skip) != 0 ||
                read_varint(&p, end, &skip) != 0 || read_varint(&p, end, &skip) != 0)
                return -1;
            break;
        case 13: /* no column */
            if (read_svarint(&p, end, &delta) != 0)
                return -1;
            break;
        case 10: case 11: case 12: /* one line, delta 0..2; column, end column */
            delta = code - 10;
            p += 2;
            break;
        default: /* short forms: same line, one byte of columns */
            p += 1;
            break;
        }
        line += delta;
        if (lasti < addr + units)
            return none ? -1 : line;
        addr += units;
    }
    return -1;
}

/* Appends code point c as UTF-8. */
static size_t put_utf8(char *out, size_t n, size_t cap, uint32_t c)
{
    char b[4];
    size_t k;
    if (c < 0x80) {
        b[0] = (char)c;
        k = 1;
    } else if (c < 0x800) {
        b[0] = (char)(0xc0 | (c >> 6));
        b[1] = (char)(0x80 | (c & 63));
        k = 2;
    } else if (c < 0x10000) {
        b[0] = (char)(0xe0 | (c >> 12));
        b[1] = (char)(0x80 | ((c >> 6) & 63));
        b[2] = (char)(0x80 | (c & 63));
        k = 3;
    } else {
        b[0] = (char)(0xf0 | (c >> 18));
        b[1] = (char)(0x80 | ((c >> 12) & 63));
        b[2] = (char)(0x80 | ((c >> 6) & 63));
        b[3] = (char)(0x80 | (c & 63));
        k = 4;
    }
    if (n + k >= cap)
        return n;
    memcpy(out + n, b, k);
    return n + k;
}

int pysite_read_str(const void *obj, char *out, size_t cap)
{
    if (!obj || cap == 0)
        return -1;
    uint32_t state;
    memcpy(&state, (const char *)obj + PY311_STR_STATE, 4);
    int64_t length;
    memcpy(&length, (const char *)obj + PY311_STR_LENGTH, 8);
    unsigned kind = (state >> PY311_STR_KIND_SHIFT) & 7;
    if (!((state >> PY311_STR_COMPACT_BIT) & 1) || !((state >> PY311_STR_READY_BIT) & 1) ||
        length < 0)
        return -1; /* legacy strings: not in code objects */
    size_t n = 0;
    if ((state >> PY311_STR_ASCII_BIT) & 1) {
        n = (size_t)length < cap - 1 ? (size_t)length : cap - 1;
        memcpy(out, (const char *)obj + PY311_STR_ASCII_DATA, n);
    } else {
        const char *data = (const char *)obj + PY311_STR_COMPACT_DATA;
        for (int64_t i = 0; i < length; i++) {
            uint32_t c = kind == 1   ? ((const uint8_t *)data)[i]
                         : kind == 2 ? ((const uint16_t *)(const void *)data)[i]
                         : kind == 4 ? ((const uint32_t *)(const void *)data)[i]
                                     : '?';
            n = put_utf8(out, n, cap, c);
        }
    }
    out[n] = 0;
    return (int)n;
}

/* The script's directory, as Python's sys.path[0]: the first argument
 * that is not an option, made absolute; the working directory for -m;
 * none for -c and standard input. */
static void find_script_dir(void)
{
    char args[8192];
    int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
    ssize_t n = fd >= 0 ? read(fd, args, sizeof args - 1) : -1;
    if (fd >= 0)
        close(fd);
    if (n <= 0)
        return;
    args[n] = 0;
    char cwd[PATH_MAX];
    if (!getcwd(cwd, sizeof cwd))
        return;
    const char *a = args + strlen(args) + 1, *end = args + n, *script = NULL;
    int module = 0, takes_arg = 0;
    for (; a < end && !script && !module; a += strlen(a) + 1) {
        if (takes_arg) {
            takes_arg = 0;
            continue;
        }
        if (a[0] != '-' || strcmp(a, "-") == 0) {
            script = a;
            break;
        }
        if (strcmp(a, "--check-hash-based-pycs") == 0) {
            takes_arg = 1;
            continue;
        }
        if (a[1] == '-')
            continue;
        for (const char *c = a + 1; *c; c++) {
            if (*c == 'c')
                return; /* -c: sys.path[0] is "" */
            if (*c == 'm') {
                module = 1;
                break;
            }
            if (*c == 'W' || *c == 'X') {
                takes_arg = c[1] == 0;
                break;
            }
        }
    }
    char full[2 * PATH_MAX];
    if (module) {
        pysite_normalize(cwd, py.script_dir, sizeof py.script_dir);
        return;
    }
    if (!script || strcmp(script, "-") == 0)
        return;
    snprintf(full, sizeof full, "%s%s%s", script[0] == '/' ? "" : cwd,
             script[0] == '/' ? "" : "/", script);
    size_t len = pysite_normalize(full, py.script_dir, sizeof py.script_dir);
    while (len > 1 && py.script_dir[len - 1] != '/')
        len--;
    py.script_dir[len > 1 ? len - 1 : len] = 0; /* its directory */
}

static int py_off; /* DETSHIM_PYTHON_SITES=off */

void pysite_configure(void)
{
    const char *v = core_getenv("DETSHIM_PYTHON_SITES");
    py_off = v && strcmp(v, "off") == 0;
    if (v && *v && !py_off && strcmp(v, "on") != 0)
        core_fail("DETSHIM_PYTHON_SITES (Python call sites are recorded)",
                  "DETSHIM_PYTHON_SITES=%s is not on or off; set one of those", v);
}

static void py_resolve(void)
{
    void *init = dlsym(RTLD_DEFAULT, "Py_IsInitialized");
    if (!init)
        return; /* not a Python process */
    const unsigned long *version = dlsym(RTLD_DEFAULT, "Py_Version"); /* 3.11 and later */
    py.version = version ? *version : 0;
    if (py_off) {
        py.state = PY_OFF;
        return;
    }
    py.state = PY_UNSUPPORTED;
    if (!version || (py.version >> 16) != PY311_VERSION_MAJOR_MINOR)
        return;
    *(void **)&py.is_initialized = init;
    *(void **)&py.this_thread_state = dlsym(RTLD_DEFAULT, "PyGILState_GetThisThreadState");
    *(void **)&py.is_finalizing = dlsym(RTLD_DEFAULT, "_Py_IsFinalizing");
    if (!py.this_thread_state)
        return;
    find_script_dir();
    /* The hook's folder is on PYTHONPATH (core/env.c puts it there), so its
     * files are named from it: the same install at another prefix gives
     * the same sites. */
    char hook[PATH_MAX];
    if (policy_hook_dir(resolve_self_dir(), hook, sizeof hook) == 0)
        pysite_normalize(hook, py.hook_dir, sizeof py.hook_dir);
    py.state = PY_OK;
}

/* Resolves the interpreter's functions once; after that, a load. */
static void py_ensure(void)
{
    if (!atomic_load_explicit(&py_resolved, memory_order_acquire)) {
        pthread_once(&py_once, py_resolve);
        atomic_store_explicit(&py_resolved, 1, memory_order_release);
    }
}

const char *pysite_header(char *buf, size_t cap)
{
    py_ensure();
    if (py.state == PY_ABSENT)
        return NULL;
    if (py.state == PY_OK)
        return "CPython 3.11: the innermost Python frame of the calling thread, beside the "
               "native frames; files relative to their sys.path entry";
    if (py.state == PY_OFF)
        return "off: DETSHIM_PYTHON_SITES=off";
    if (py.version)
        snprintf(buf, cap, "none: CPython %lu.%lu is not supported (3.11 only)",
                 py.version >> 24, (py.version >> 16) & 0xff);
    else
        snprintf(buf, cap, "none: a CPython older than 3.11 is not supported (3.11 only)");
    return buf;
}

/* 1 for code the interpreter or a library generated, which no one wrote
 * at that line: "<frozen importlib._bootstrap>", numpy's "<__array_function__
 * internals>". Its caller is the frame a person looks for. "<string>" and
 * "<stdin>" are the program's own. */
static int synthetic(const char *code)
{
    const char *name = ld_ptr(code, PY311_CODE_FILENAME);
    uint32_t state;
    if (!name)
        return 1;
    memcpy(&state, name + PY311_STR_STATE, 4);
    if (!((state >> PY311_STR_ASCII_BIT) & 1) || !((state >> PY311_STR_COMPACT_BIT) & 1))
        return 0;
    const char *s = name + PY311_STR_ASCII_DATA;
    return s[0] == '<' && (s[1] == '_' || strncmp(s + 1, "frozen ", 7) == 0);
}

/* The innermost complete frame of this thread's Python stack that is not
 * synthetic, or NULL; sets *lasti to its instruction's code-unit index. */
static const void *innermost_frame(int *lasti)
{
    if (!py.is_initialized() || (py.is_finalizing && py.is_finalizing()))
        return NULL;
    const void *ts = py.this_thread_state();
    const void *cframe = ts ? ld_ptr(ts, PY311_TSTATE_CFRAME) : NULL;
    const void *f = cframe ? ld_ptr(cframe, PY311_CFRAME_CURRENT_FRAME) : NULL;
    for (int depth = 0; f && depth < 64; depth++, f = ld_ptr(f, PY311_IFRAME_PREVIOUS)) {
        const char *code = ld_ptr(f, PY311_IFRAME_CODE);
        const char *instr = ld_ptr(f, PY311_IFRAME_PREV_INSTR);
        if (!code)
            continue;
        const char *units = code + PY311_CODE_ADAPTIVE;
        int first = ld_int(code, PY311_CODE_FIRSTTRACEABLE);
        char owner = *((const char *)f + PY311_IFRAME_OWNER);
        if (owner != PY311_FRAME_OWNED_BY_GENERATOR && instr < units + first * PY311_CODEUNIT_SIZE)
            continue; /* not started yet: its caller is the frame that runs */
        if (synthetic(code))
            continue;
        *lasti = (int)((instr - units) / PY311_CODEUNIT_SIZE);
        return code;
    }
    return NULL;
}

/* Describes frame `code` at `lasti` into e, and writes its SITE frame. */
static void describe(struct thread_buf *tb, struct pysite_entry *e, const char *code, int lasti)
{
    char file[PATH_MAX], norm[PATH_MAX], where[300], name[256];
    if (pysite_read_str(e->filename, file, sizeof file) < 0)
        snprintf(file, sizeof file, "?");
    if (pysite_read_str(e->qualname, name, sizeof name) < 0)
        snprintf(name, sizeof name, "?");
    pysite_normalize(file, norm, sizeof norm);
    const char *table = e->linetable;
    int64_t tlen;
    memcpy(&tlen, table + PY311_BYTES_SIZE, 8);
    int line = tlen > 0 ? pysite_line_at((const uint8_t *)table + PY311_BYTES_DATA, (size_t)tlen,
                                         ld_int(code, PY311_CODE_FIRSTLINENO), lasti)
                        : -1;
    const char *rel = pysite_relative(norm, py.hook_dir, py.script_dir);
    size_t rlen = strlen(rel);
    if (rlen > 240)
        rel += rlen - 240; /* the end says more than the start */
    snprintf(where, sizeof where, "%s:%d", rel, line);
    XXH3_state_t st;
    XXH3_64bits_reset(&st);
    XXH3_64bits_update(&st, where, strlen(where) + 1);
    XXH3_64bits_update(&st, name, strlen(name));
    e->id = XXH3_64bits_digest(&st);
    callsite_emit(tb, TRACE_PYTHON_MODULE, e->id, where, name);
}

int pysite_capture(struct thread_buf *tb, detshim_frame *out)
{
    py_ensure();
    if (py.state != PY_OK)
        return 0;
    int lasti = 0;
    const char *code = innermost_frame(&lasti);
    if (!code)
        return 0;
    const void *filename = ld_ptr(code, PY311_CODE_FILENAME);
    const void *qualname = ld_ptr(code, PY311_CODE_QUALNAME);
    const void *linetable = ld_ptr(code, PY311_CODE_LINETABLE);
    if (!filename || !qualname || !linetable)
        return 0;
    /* A code object freed and another made at its address is told apart
     * by its strings and table (the same ones: the same code). */
    size_t h = (((uintptr_t)code >> 4) ^ ((uintptr_t)lasti * 0x9e3779b1u)) & (PYSITE_CACHE_SIZE - 1);
    struct pysite_entry *e = &tb->pysites[h];
    if (e->code != code || e->lasti != lasti || e->filename != filename ||
        e->qualname != qualname || e->linetable != linetable) {
        *e = (struct pysite_entry){ code, filename, qualname, linetable, lasti, 0 };
        describe(tb, e, code, lasti);
    }
    out->module = TRACE_PYTHON_MODULE;
    out->offset = e->id;
    return 1;
}
