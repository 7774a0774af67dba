/* The few CPython 3.11 (x86-64) struct layouts the Python call site reads
 * (pysite.c), declared here so the shim builds without Python's headers
 * and never links libpython. tests/unit/test_pysite.c checks every value
 * against the installed headers (Include/internal/pycore_frame.h and
 * friends) when they are there. Another CPython version gets no Python
 * call site, said in the trace header.
 */
#ifndef DETSHIM_PYSITE_LAYOUT_H
#define DETSHIM_PYSITE_LAYOUT_H

#define PY311_VERSION_MAJOR_MINOR 0x030bu /* Py_Version >> 16 */

/* PyThreadState */
#define PY311_TSTATE_CFRAME 56 /* _PyCFrame *cframe */
/* _PyCFrame */
#define PY311_CFRAME_CURRENT_FRAME 8 /* _PyInterpreterFrame *current_frame */
/* _PyInterpreterFrame */
#define PY311_IFRAME_CODE 32       /* PyCodeObject *f_code */
#define PY311_IFRAME_PREVIOUS 48   /* _PyInterpreterFrame *previous */
#define PY311_IFRAME_PREV_INSTR 56 /* _Py_CODEUNIT *prev_instr */
#define PY311_IFRAME_OWNER 69      /* char owner */
#define PY311_FRAME_OWNED_BY_GENERATOR 1
/* PyCodeObject */
#define PY311_CODE_FIRSTLINENO 72      /* int co_firstlineno */
#define PY311_CODE_FILENAME 112        /* PyObject *co_filename (str) */
#define PY311_CODE_QUALNAME 128        /* PyObject *co_qualname (str) */
#define PY311_CODE_LINETABLE 136       /* PyObject *co_linetable (bytes) */
#define PY311_CODE_FIRSTTRACEABLE 168  /* int _co_firsttraceable */
#define PY311_CODE_ADAPTIVE 184        /* char co_code_adaptive[]: the code units */
#define PY311_CODEUNIT_SIZE 2
/* str (PyASCIIObject, PyCompactUnicodeObject) */
#define PY311_STR_LENGTH 16      /* Py_ssize_t length, in code points */
#define PY311_STR_STATE 32       /* the state bit-field, as a 32-bit word */
#define PY311_STR_KIND_SHIFT 2   /* interned:2, kind:3, compact:1, ascii:1, ready:1 */
#define PY311_STR_COMPACT_BIT 5
#define PY311_STR_ASCII_BIT 6
#define PY311_STR_READY_BIT 7
#define PY311_STR_ASCII_DATA 48   /* sizeof(PyASCIIObject): compact ASCII data */
#define PY311_STR_UTF8_LENGTH 48  /* PyCompactUnicodeObject.utf8_length */
#define PY311_STR_UTF8 56         /* PyCompactUnicodeObject.utf8, NULL until asked */
#define PY311_STR_COMPACT_DATA 72 /* sizeof(PyCompactUnicodeObject): compact data */
/* bytes */
#define PY311_BYTES_SIZE 16 /* ob_size */
#define PY311_BYTES_DATA 32 /* ob_sval */

#endif
