/* Python call sites (shim/trace/pysite.c): the CPython 3.11 layouts the
 * shim declares are the installed headers' (checked when the headers are
 * there; the rest runs everywhere), line numbers come out of a location
 * table as Python's own co_lines() gives them, and file paths are made
 * relative to their sys.path entry whatever the prefix or working
 * directory. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "trace/pysite_layout.h"
#include "trace/trace.h"
#include "trace/trace_internal.h"

#if __has_include("/usr/include/python3.11/Python.h")
#define HAVE_PY311_HEADERS 1
#define Py_BUILD_CORE 1
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#pragma GCC diagnostic ignored "-Wsign-compare"
#include "/usr/include/python3.11/Python.h"
#include "/usr/include/python3.11/internal/pycore_frame.h"
#pragma GCC diagnostic pop
#endif

static void test_every_layout_we_declare_is_the_headers(void **state)
{
    (void)state;
#ifdef HAVE_PY311_HEADERS
    assert_int_equal(PY_VERSION_HEX >> 16, PY311_VERSION_MAJOR_MINOR);
    assert_int_equal(offsetof(PyThreadState, cframe), PY311_TSTATE_CFRAME);
    assert_int_equal(offsetof(_PyCFrame, current_frame), PY311_CFRAME_CURRENT_FRAME);
    assert_int_equal(offsetof(_PyInterpreterFrame, f_code), PY311_IFRAME_CODE);
    assert_int_equal(offsetof(_PyInterpreterFrame, previous), PY311_IFRAME_PREVIOUS);
    assert_int_equal(offsetof(_PyInterpreterFrame, prev_instr), PY311_IFRAME_PREV_INSTR);
    assert_int_equal(offsetof(_PyInterpreterFrame, owner), PY311_IFRAME_OWNER);
    assert_int_equal(FRAME_OWNED_BY_GENERATOR, PY311_FRAME_OWNED_BY_GENERATOR);
    assert_int_equal(offsetof(PyCodeObject, co_firstlineno), PY311_CODE_FIRSTLINENO);
    assert_int_equal(offsetof(PyCodeObject, co_filename), PY311_CODE_FILENAME);
    assert_int_equal(offsetof(PyCodeObject, co_qualname), PY311_CODE_QUALNAME);
    assert_int_equal(offsetof(PyCodeObject, co_linetable), PY311_CODE_LINETABLE);
    assert_int_equal(offsetof(PyCodeObject, _co_firsttraceable), PY311_CODE_FIRSTTRACEABLE);
    assert_int_equal(offsetof(PyCodeObject, co_code_adaptive), PY311_CODE_ADAPTIVE);
    assert_int_equal(sizeof(_Py_CODEUNIT), PY311_CODEUNIT_SIZE);
    assert_int_equal(offsetof(PyASCIIObject, length), PY311_STR_LENGTH);
    assert_int_equal(offsetof(PyASCIIObject, state), PY311_STR_STATE);
    assert_int_equal(sizeof(PyASCIIObject), PY311_STR_ASCII_DATA);
    assert_int_equal(offsetof(PyCompactUnicodeObject, utf8_length), PY311_STR_UTF8_LENGTH);
    assert_int_equal(offsetof(PyCompactUnicodeObject, utf8), PY311_STR_UTF8);
    assert_int_equal(sizeof(PyCompactUnicodeObject), PY311_STR_COMPACT_DATA);
    assert_int_equal(offsetof(PyVarObject, ob_size), PY311_BYTES_SIZE);
    assert_int_equal(offsetof(PyBytesObject, ob_sval), PY311_BYTES_DATA);
    /* The state bit-field, set through the headers' names, read as we do. */
    PyASCIIObject o;
    memset(&o, 0, sizeof o);
    o.state.kind = PyUnicode_2BYTE_KIND;
    o.state.compact = 1;
    o.state.ready = 1;
    uint32_t word;
    memcpy(&word, (char *)&o + PY311_STR_STATE, 4);
    assert_int_equal((word >> PY311_STR_KIND_SHIFT) & 7, 2);
    assert_int_equal((word >> PY311_STR_COMPACT_BIT) & 1, 1);
    assert_int_equal((word >> PY311_STR_ASCII_BIT) & 1, 0);
    assert_int_equal((word >> PY311_STR_READY_BIT) & 1, 1);
#else
    skip(); /* no Python 3.11 headers (python3-dev) on this machine */
#endif
}

/* f's co_linetable and co_lines() from CPython 3.11.2 for
 * "def f(x):\n" + "    y = x + 1\n" * 3 + "\n" * 70 + "    z = (y +\n         2)\n"
 * + "    return z\n": short, one-line and long entries. */
static const char table_hex[] =
    "8000d80809884189058041d80809884189058041d80809884189058041f04e02000a0bd8090af103010a0b8041e00b0c8048";
static const int lines_by_unit[] = { 1, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 4, 4, 4, 4, 4,
                                     75, 76, 75, 75, 75, 77, 77 };

static void test_line_numbers_are_pythons_own_for_every_instruction(void **state)
{
    (void)state;
    uint8_t table[64];
    size_t n = strlen(table_hex) / 2;
    for (size_t i = 0; i < n; i++)
        sscanf(table_hex + 2 * i, "%2hhx", &table[i]);
    for (size_t u = 0; u < sizeof lines_by_unit / sizeof lines_by_unit[0]; u++)
        assert_int_equal(pysite_line_at(table, n, 1, (int)u), lines_by_unit[u]);
    assert_int_equal(pysite_line_at(table, n, 1, 23), -1); /* past the end */
    const uint8_t none[] = { 0xf8 };                    /* code 15: no location */
    assert_int_equal(pysite_line_at(none, 1, 5, 0), -1);
    const uint8_t bad[] = { 0x12 };                     /* not an entry's first byte */
    assert_int_equal(pysite_line_at(bad, 1, 5, 0), -1);
    const uint8_t cut[] = { 0xf0 };                     /* long form cut short */
    assert_int_equal(pysite_line_at(cut, 1, 5, 0), -1);
}

static void test_paths_are_relative_to_their_sys_path_entry(void **state)
{
    (void)state;
    char norm[256];
    pysite_normalize("/home/u/proj/./train.py", norm, sizeof norm);
    assert_string_equal(norm, "/home/u/proj/train.py");
    pysite_normalize("//a/b/../c//d.py", norm, sizeof norm);
    assert_string_equal(norm, "/a/c/d.py");
    pysite_normalize("<string>", norm, sizeof norm);
    assert_string_equal(norm, "<string>");
    const char *proj = "/home/u/proj";
    assert_string_equal(pysite_relative("/home/u/proj/train.py", "", proj), "train.py");
    assert_string_equal(pysite_relative("/home/u/proj/lib/m.py", "", proj), "lib/m.py");
    assert_string_equal(
        pysite_relative("/opt/venv/lib/python3.11/site-packages/torch/nn/f.py", "", proj),
        "torch/nn/f.py");
    assert_string_equal(pysite_relative("/usr/lib/python3/dist-packages/numpy/core/x.py", "", ""),
                        "numpy/core/x.py");
    assert_string_equal(pysite_relative("/usr/lib/python3.11/random.py", "", ""), "random.py");
    assert_string_equal(
        pysite_relative("/home/u/proj/.venv/lib/python3.11/site-packages/t/f.py", "", proj),
        "t/f.py"); /* a venv inside the project: by its site-packages */
    assert_string_equal(pysite_relative("/home/u/proj2/x.py", "", proj), "/home/u/proj2/x.py");
    assert_string_equal(pysite_relative("<string>", "", proj), "<string>");
}

/* A compact str as the interpreter lays it out. */
struct fake_str {
    uint8_t bytes[PY311_STR_COMPACT_DATA + 64];
};

static void make_str(struct fake_str *s, int ascii, int kind, const void *data, int64_t len)
{
    memset(s, 0, sizeof *s);
    uint32_t state = (uint32_t)kind << PY311_STR_KIND_SHIFT | 1u << PY311_STR_COMPACT_BIT |
                     (uint32_t)ascii << PY311_STR_ASCII_BIT | 1u << PY311_STR_READY_BIT;
    memcpy(s->bytes + PY311_STR_STATE, &state, 4);
    memcpy(s->bytes + PY311_STR_LENGTH, &len, 8);
    memcpy(s->bytes + (ascii ? PY311_STR_ASCII_DATA : PY311_STR_COMPACT_DATA), data,
           (size_t)len * (size_t)kind);
}

static void test_strings_are_read_as_utf8_whatever_their_kind(void **state)
{
    (void)state;
    struct fake_str s;
    char out[64];
    make_str(&s, 1, 1, "forward", 7);
    assert_int_equal(pysite_read_str(&s, out, sizeof out), 7);
    assert_string_equal(out, "forward");
    make_str(&s, 0, 1, "caf\xe9", 4); /* latin-1 */
    pysite_read_str(&s, out, sizeof out);
    assert_string_equal(out, "caf\xc3\xa9");
    const uint16_t ucs2[] = { 0x3b1, 0x3b2 };
    make_str(&s, 0, 2, ucs2, 2);
    pysite_read_str(&s, out, sizeof out);
    assert_string_equal(out, "\xce\xb1\xce\xb2");
    const uint32_t ucs4[] = { 0x1f600 };
    make_str(&s, 0, 4, ucs4, 1);
    pysite_read_str(&s, out, sizeof out);
    assert_string_equal(out, "\xf0\x9f\x98\x80");
    make_str(&s, 1, 1, "a_rather_long_name", 18);
    assert_int_equal(pysite_read_str(&s, out, 5), 4); /* cut to fit */
    assert_string_equal(out, "a_ra");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_layout_we_declare_is_the_headers),
        cmocka_unit_test(test_line_numbers_are_pythons_own_for_every_instruction),
        cmocka_unit_test(test_paths_are_relative_to_their_sys_path_entry),
        cmocka_unit_test(test_strings_are_read_as_utf8_whatever_their_kind),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
