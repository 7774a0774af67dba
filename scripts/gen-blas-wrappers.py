#!/usr/bin/env python3
"""Prints build/gen/blas_wrappers.c: libdetshim's BLAS interceptors.

Every wrapper has one shape: resolve the real symbol lazily; when not tracing
(or when re-entered from inside the shim) call it and return; otherwise record
the parameters, digest the operands the BLAS reads (before the call) and the
ones it writes (after), and commit the record. The table ROUTINES is the
source of truth: one row per routine, expanded over precisions, over the cblas
and Fortran interfaces and over the symbol naming variants in VARIANTS.

Usage: gen-blas-wrappers.py             the C file, on stdout
       gen-blas-wrappers.py --symbols   the exported symbol names, one a line
"""
import sys
from dataclasses import dataclass, field


# --- Precisions --------------------------------------------------------------

@dataclass(frozen=True)
class Prec:
    elem: int       # bytes per element
    real: str       # C type of a real scalar (and of nrm2/asum results)
    value: str      # C type of one element returned by value (dot)
    complex: bool


PRECS = {
    's': Prec(4, 'float', 'float', False),
    'd': Prec(8, 'double', 'double', False),
    'c': Prec(8, 'float', 'float _Complex', True),
    'z': Prec(16, 'double', 'double _Complex', True),
}


# --- Symbol naming variants --------------------------------------------------

@dataclass(frozen=True)
class Variant:
    prefix: str
    cblas_suffix: str   # appended to cblas_<name>
    f77_suffix: str     # appended to <name>
    int_type: str       # BLAS integer (blasint); CBLAS enums stay int

    def cblas(self, name):
        return f'{self.prefix}cblas_{name}{self.cblas_suffix}'

    def f77(self, name):
        return f'{self.prefix}{name}{self.f77_suffix}'


VARIANTS = (
    Variant('', '', '_', 'int'),              # LP64: Debian's libopenblas, reference BLAS
    Variant('', '64_', '_64_', 'int64_t'),    # ILP64 OpenBLAS built with SYMBOLSUFFIX=64_
    # numpy 2.x wheels bundle scipy-openblas64 (libscipy_openblas64_*.so in
    # numpy.libs), which exports only ILP64 names with this prefix, e.g.
    # scipy_cblas_dgemm64_, scipy_dgemm_64_, scipy_cblas_zdotc_sub64_.
    Variant('scipy_', '64_', '_64_', 'int64_t'),
)


# --- Parameters --------------------------------------------------------------
# A routine's parameters are written as a string of names in call order; the
# name says what the parameter is. A trailing '*' marks an array the routine
# writes; ':real' marks a real scalar of a complex routine (csscal's alpha).

ENUM_KINDS = {'order': 'order', 'trans': 'trans', 'transa': 'trans', 'transb': 'trans',
              'uplo': 'uplo', 'side': 'side', 'diag': 'diag'}
INTS = {'m', 'n', 'k', 'lda', 'ldb', 'ldc', 'incx', 'incy'}
SCALARS = {'alpha', 'beta'}
ARRAYS = {'a', 'b', 'c', 'x', 'y'}


@dataclass(frozen=True)
class Param:
    name: str
    kind: str           # enum, int, scalar, real, array, out
    written: bool = False


def parse_params(spec):
    params = []
    for tok in spec.split():
        written = tok.endswith('*')
        name, _, mod = tok.rstrip('*').partition(':')
        if name in ENUM_KINDS:
            kind = 'enum'
        elif name in INTS:
            kind = 'int'
        elif name in SCALARS:
            kind = 'real' if mod == 'real' else 'scalar'
        elif name in ARRAYS:
            kind = 'array'
        else:
            raise ValueError(f'unknown parameter {tok!r}')
        params.append(Param(name, kind, written))
    return params


# --- Operands ----------------------------------------------------------------
# Shapes are C expression templates over parameter values: a bare parameter
# name stands for its value, '{name}' inside a longer expression likewise
# ('{trans}' is the parameter as an upper-case char, '{order}' is 'C' in the
# Fortran interface). Dimensions are the logical ones; the helpers in
# shim/blas/blas_operands.c turn them into the stored runs.

def general(ptr, trans, rows, cols, ld):
    """A rows x cols matrix op(X); trans None means X itself."""
    return ('general', ptr, trans, rows, cols, ld)


def vector(ptr, n, inc):
    return ('vector', ptr, n, inc)


def triangle(ptr, uplo, diag, n, ld):
    """The referenced triangle of an n x n matrix; diag None means non-unit."""
    return ('triangle', ptr, uplo, diag, n, ld)


@dataclass(frozen=True)
class Operand:
    name: str
    shape: tuple
    reads: bool         # digested as TRACE_ROLE_IN before the call
    writes: bool        # digested as TRACE_ROLE_OUT after the call
    when: str = ''      # the input is read only if this scalar is nonzero


def In(name, shape, when=''):
    return Operand(name, shape, True, False, when)


def Out(name, shape):
    return Operand(name, shape, False, True)


def InOut(name, shape, when=''):
    return Operand(name, shape, True, True, when)


# --- The routines ------------------------------------------------------------

def each(template, precs):
    return {p: template.format(p=p) for p in precs}


@dataclass(frozen=True)
class Routine:
    names: dict         # precision letter -> routine name
    params: str
    operands: tuple
    ret: str = ''       # '', 'value' (an element), 'real', 'index'
    cblas_sub: bool = False  # also cblas_<name>_sub, result through a pointer
    base: str = ''      # the routine's name without precision, for CANONICAL

    def __post_init__(self):
        if not self.base:
            # The name of the 'c' (or any) precision with its letter dropped:
            # cgemm -> gemm, csscal -> sscal is not wanted, so the template's
            # own text decides: each('{p}gemm') gives 'gemm'.
            object.__setattr__(self, 'base', _base_of(self.names))


def _base_of(names):
    """'gemm' for {s: sgemm, d: dgemm, ...}: the common suffix after the
    precision letter; special names (csscal, scnrm2, isamax) keep theirs."""
    suffixes = {n[1:] for p, n in names.items() if n.startswith(p)}
    return suffixes.pop() if len(suffixes) == 1 else '/'.join(sorted(names.values()))


XLEN_GEMV = "{trans} == 'N' ? {n} : {m}"
YLEN_GEMV = "{trans} == 'N' ? {m} : {n}"
SIDE_DIM = "{side} == 'L' ? {m} : {n}"

GER = ('order m n alpha x incx y incy a* lda',
       (In('x', vector('x', 'm', 'incx'), when='alpha'),
        In('y', vector('y', 'n', 'incy'), when='alpha'),
        InOut('A', general('a', None, 'm', 'n', 'lda'))))
DOT = ('n x incx y incy',
       (In('x', vector('x', 'n', 'incx')), In('y', vector('y', 'n', 'incy'))))
REDUCE = ('n x incx', (In('x', vector('x', 'n', 'incx')),))
TRMM = ('order side uplo transa diag m n alpha a lda b* ldb',
        (In('A', triangle('a', 'uplo', 'diag', SIDE_DIM, 'lda'), when='alpha'),
         InOut('B', general('b', None, 'm', 'n', 'ldb'), when='alpha')))
TRMV = ('order uplo trans diag n a lda x* incx',
        (In('A', triangle('a', 'uplo', 'diag', 'n', 'lda')),
         InOut('x', vector('x', 'n', 'incx'))))

# `when` follows the reference BLAS quick returns: with alpha == 0 the
# product is skipped (A, B, x are not read), with beta == 0 C or y is
# overwritten without being read. Such inputs may hold garbage, so digesting
# them would report differences the BLAS never saw.
ROUTINES = (
    Routine(each('{p}gemm', 'sdcz'),
            'order transa transb m n k alpha a lda b ldb beta c* ldc',
            (In('A', general('a', 'transa', 'm', 'k', 'lda'), when='alpha'),
             In('B', general('b', 'transb', 'k', 'n', 'ldb'), when='alpha'),
             InOut('C', general('c', None, 'm', 'n', 'ldc'), when='beta'))),
    Routine(each('{p}gemv', 'sdcz'),
            'order trans m n alpha a lda x incx beta y* incy',
            (In('A', general('a', None, 'm', 'n', 'lda'), when='alpha'),
             In('x', vector('x', XLEN_GEMV, 'incx'), when='alpha'),
             InOut('y', vector('y', YLEN_GEMV, 'incy'), when='beta'))),
    Routine(each('{p}ger', 'sd'), *GER),
    Routine(each('{p}geru', 'cz'), *GER),
    Routine(each('{p}gerc', 'cz'), *GER),
    Routine(each('{p}dot', 'sd'), *DOT, ret='value'),
    Routine(each('{p}dotu', 'cz'), *DOT, ret='value', cblas_sub=True),
    Routine(each('{p}dotc', 'cz'), *DOT, ret='value', cblas_sub=True),
    Routine(each('{p}axpy', 'sdcz'), 'n alpha x incx y* incy',
            (In('x', vector('x', 'n', 'incx'), when='alpha'),
             InOut('y', vector('y', 'n', 'incy')))),
    Routine(each('{p}scal', 'sdcz'), 'n alpha x* incx',
            (InOut('x', vector('x', 'n', 'incx')),)),
    Routine({'c': 'csscal', 'z': 'zdscal'}, 'n alpha:real x* incx',
            (InOut('x', vector('x', 'n', 'incx')),)),
    Routine({'s': 'snrm2', 'd': 'dnrm2', 'c': 'scnrm2', 'z': 'dznrm2'}, *REDUCE, ret='real'),
    Routine({'s': 'sasum', 'd': 'dasum', 'c': 'scasum', 'z': 'dzasum'}, *REDUCE, ret='real'),
    Routine(each('i{p}amax', 'sdcz'), *REDUCE, ret='index'),
    Routine(each('{p}copy', 'sdcz'), 'n x incx y* incy',
            (In('x', vector('x', 'n', 'incx')), Out('y', vector('y', 'n', 'incy')))),
    Routine(each('{p}swap', 'sdcz'), 'n x* incx y* incy',
            (InOut('x', vector('x', 'n', 'incx')), InOut('y', vector('y', 'n', 'incy')))),
    Routine(each('{p}symm', 'sdcz'), 'order side uplo m n alpha a lda b ldb beta c* ldc',
            (In('A', triangle('a', 'uplo', None, SIDE_DIM, 'lda'), when='alpha'),
             In('B', general('b', None, 'm', 'n', 'ldb'), when='alpha'),
             InOut('C', general('c', None, 'm', 'n', 'ldc'), when='beta'))),
    Routine(each('{p}syrk', 'sdcz'), 'order uplo trans n k alpha a lda beta c* ldc',
            (In('A', general('a', 'trans', 'n', 'k', 'lda'), when='alpha'),
             InOut('C', triangle('c', 'uplo', None, 'n', 'ldc'), when='beta'))),
    Routine(each('{p}syr2k', 'sdcz'), 'order uplo trans n k alpha a lda b ldb beta c* ldc',
            (In('A', general('a', 'trans', 'n', 'k', 'lda'), when='alpha'),
             In('B', general('b', 'trans', 'n', 'k', 'ldb'), when='alpha'),
             InOut('C', triangle('c', 'uplo', None, 'n', 'ldc'), when='beta'))),
    Routine(each('{p}trmm', 'sdcz'), *TRMM),
    Routine(each('{p}trsm', 'sdcz'), *TRMM),
    Routine(each('{p}trmv', 'sdcz'), *TRMV),
    Routine(each('{p}trsv', 'sdcz'), *TRMV),
)


# --- Expansion: one Wrapper per exported symbol --------------------------------

@dataclass
class Wrapper:
    base: str           # routine without precision: 'gemm', 'dotc', 'scal'...
    name: str           # the routine as the reference BLAS names it: 'cgemm'
    symbol: str
    fortran: bool
    prec: Prec
    pletter: str
    variant: Variant
    params: list
    operands: tuple
    ret: str            # '' or the C return type
    result_by_pointer: bool = False
    env: dict = field(init=False)   # template name -> C value expression

    def __post_init__(self):
        self.env = value_env(self)


def return_type(routine, prec, variant, fortran):
    if routine.ret == 'value':
        return prec.value
    if routine.ret == 'real':
        return prec.real
    if routine.ret == 'index':
        # CBLAS_INDEX is size_t; the Fortran function returns a blasint.
        return variant.int_type if fortran else 'size_t'
    return ''


def expand():
    wrappers = []
    for variant in VARIANTS:
        for routine in ROUTINES:
            for p, name in routine.names.items():
                prec = PRECS[p]
                params = parse_params(routine.params)
                f77_params = [q for q in params if q.name != 'order']
                base = routine.base
                wrappers.append(Wrapper(base, name, variant.cblas(name), False, prec, p, variant, params,
                                        routine.operands,
                                        return_type(routine, prec, variant, False)))
                if routine.cblas_sub:
                    wrappers.append(Wrapper(base, name, variant.cblas(name + '_sub'), False, prec, p, variant,
                                            params + [Param('ret', 'out', True)],
                                            routine.operands, '', result_by_pointer=True))
                wrappers.append(Wrapper(base, name, variant.f77(name), True, prec, p, variant, f77_params,
                                        routine.operands,
                                        return_type(routine, prec, variant, True)))
    return wrappers


# --- C emitters --------------------------------------------------------------

def param_type(w, p):
    """The C type of parameter p in wrapper w (cblas by value, Fortran by pointer)."""
    if p.kind == 'enum':
        return 'const char *' if w.fortran else 'const int'
    if p.kind == 'int':
        base = f'const {w.variant.int_type}'
    elif p.kind == 'real' or (p.kind == 'scalar' and not w.prec.complex):
        base = f'const {w.prec.real}'
    elif p.kind == 'scalar':
        return 'const void *'
    elif p.kind == 'array':
        data = 'void' if w.prec.complex else w.prec.real
        return f'{"" if p.written else "const "}{data} *'
    else:
        return 'void *'
    return base + ' *' if w.fortran else base


def declare(typ, name):
    return f'{typ}{name}' if typ.endswith('*') else f'{typ} {name}'


def value_env(w):
    """Template name -> C expression for the value of each parameter."""
    env = {'order': "'C'"}
    for p in w.params:
        if p.kind == 'enum':
            env[p.name] = f'{p.name}_c'
        elif p.kind in ('int', 'real') or (p.kind == 'scalar' and not w.prec.complex):
            env[p.name] = f'*{p.name}' if w.fortran else p.name
        else:
            env[p.name] = p.name
    return env


def expr(w, template):
    if template.isidentifier():
        template = '{' + template + '}'
    return template.format(**w.env)


def char_local(w, p):
    conv = 'blas_fchar' if w.fortran else f'blas_{ENUM_KINDS[p.name]}_char'
    return f'    const char {p.name}_c = {conv}({p.name});'


def record_param(w, p):
    v = w.env[p.name]
    if p.kind == 'enum':
        return f'    trace_rec_char(&r, "{p.name}", {v});'
    if p.kind == 'int':
        return f'    trace_rec_int(&r, "{p.name}", {v});'
    if p.kind == 'scalar' and w.prec.complex:
        bits = 'c64' if w.pletter == 'c' else 'c128'
        return f'    trace_rec_{bits}(&r, "{p.name}", {v});'
    if p.kind in ('scalar', 'real'):
        bits = 'f32' if w.prec.real == 'float' else 'f64'
        return f'    trace_rec_{bits}(&r, "{p.name}", {v});'
    return None


def nonzero(w, name):
    if w.prec.complex:
        return f'!blas_{"c64" if w.pletter == "c" else "c128"}_is_zero({name})'
    return f'{w.env[name]} != 0'


def digest_call(w, shape):
    kind, ptr = shape[0], shape[1]
    elem = w.prec.elem
    if kind == 'general':
        _, _, trans, rows, cols, ld = shape
        t = w.env[trans] if trans else "'N'"
        return (f'blas_digest_general({w.env["order"]}, {t}, {expr(w, rows)}, '
                f'{expr(w, cols)}, {ptr}, {expr(w, ld)}, {elem})')
    if kind == 'vector':
        _, _, n, inc = shape
        return f'blas_digest_vec({ptr}, {expr(w, n)}, {expr(w, inc)}, {elem})'
    _, _, uplo, diag, n, ld = shape
    d = w.env[diag] if diag else "'N'"
    return (f'blas_digest_tri({w.env["order"]}, {w.env[uplo]}, {d}, {expr(w, n)}, '
            f'{ptr}, {expr(w, ld)}, {elem})')


def record_operand(w, op, role, indent):
    return (f'{indent}blas_rec_operand(&r, "{op.name}", {role},\n'
            f'{indent}                 {digest_call(w, op.shape)});')


def emit_inputs(w):
    """IN digests, grouped under one test per run of operands sharing a condition."""
    lines, open_when = [], None
    for op in (o for o in w.operands if o.reads):
        if op.when != open_when:
            if open_when:
                lines.append('    }')
            if op.when:
                lines.append(f'    if ({nonzero(w, op.when)}) {{')
            open_when = op.when
        lines.append(record_operand(w, op, 'TRACE_ROLE_IN', '        ' if op.when else '    '))
    if open_when:
        lines.append('    }')
    return lines


# --- Canonical kernels --------------------------------------------------------
# The call to detshim's own kernel for a routine, as a C template over the
# same value names as the shapes ('{result}' is where a function result
# goes). Every kernel returns 0, or nonzero when it declines the arguments
# (the vendor BLAS then runs and reports the error). A routine absent here
# falls back to pinned in canonical mode, and its records say so.
GER_CANON = '{fn}({order}, {m}, {n}, {alpha}, x, {incx}, y, {incy}, a, {lda})'
DOT_CANON = '{fn}({n}, x, {incx}, y, {incy}, {result})'
REDUCE_CANON = '{fn}({n}, x, {incx}, {result})'
SCAL_CANON = '{fn}({n}, {alpha}, x, {incx})'
TRV_CANON = '{fn}({order}, {uplo}, {trans}, {diag}, {n}, a, {lda}, x, {incx})'
TRM_CANON = ('{fn}({order}, {side}, {uplo}, {transa}, {diag}, {m}, {n}, {alpha}, a, {lda}, '
             'b, {ldb})')
CANONICAL = {
    'gemm': '{fn}({order}, {transa}, {transb}, {m}, {n}, {k}, {alpha}, a, {lda}, '
            'b, {ldb}, {beta}, c, {ldc})',
    'gemv': '{fn}({order}, {trans}, {m}, {n}, {alpha}, a, {lda}, x, {incx}, {beta}, y, {incy})',
    'ger': GER_CANON, 'geru': GER_CANON, 'gerc': GER_CANON,
    'dot': DOT_CANON, 'dotu': DOT_CANON, 'dotc': DOT_CANON,
    'nrm2': REDUCE_CANON, 'asum': REDUCE_CANON,
    'axpy': '{fn}({n}, {alpha}, x, {incx}, y, {incy})',
    'scal': SCAL_CANON, 'csscal/zdscal': SCAL_CANON,
    'trmv': TRV_CANON, 'trsv': TRV_CANON,
    'syrk': '{fn}({order}, {uplo}, {trans}, {n}, {k}, {alpha}, a, {lda}, {beta}, c, {ldc})',
    'symm': '{fn}({order}, {side}, {uplo}, {m}, {n}, {alpha}, a, {lda}, b, {ldb}, {beta}, '
            'c, {ldc})',
    'trmm': TRM_CANON, 'trsm': TRM_CANON,
}


def canonical_call(w, base):
    template = CANONICAL.get(base)
    if not template:
        return None
    env = dict(w.env, fn=f'canon_{w.name}',
               result='ret' if w.result_by_pointer else '&ret')
    return template.format(**env)


def emit(w):
    fn = f'real_{w.symbol}_fn'
    ret = w.ret or 'void'
    decls = ', '.join(declare(param_type(w, p), p.name) for p in w.params)
    types = ', '.join(param_type(w, p) for p in w.params)
    args = ', '.join(p.name for p in w.params)
    canon = canonical_call(w, w.base)
    call_real = f'ret = real({args});' if w.ret else f'real({args});'
    through = ([f'        return real({args});'] if w.ret else
               ['    {', f'        real({args});', '        return;', '    }'])
    out = [f'typedef {ret} {fn}({types});',
           '',
           f'DETSHIM_EXPORT {ret} {w.symbol}({decls})',
           '{',
           '    static void *real_p;',
           f'    {fn} *real = ({fn} *)(uintptr_t)resolve_real_cached(&real_p, "{w.symbol}");',
           '    /* Re-entered from inside the shim or the vendor: straight through. */',
           '    int nested = guard_held();',
           '    int traced = !nested && trace_active();',
           '    int mode = nested ? BLAS_MODE_PASSTHROUGH : core_cfg.blas_mode;',
           '    if (!traced && mode == BLAS_MODE_PASSTHROUGH)'] + through + [
           '    guard_enter();']
    if w.ret:
        out.append(f'    {w.ret} ret;')
    out += [char_local(w, p) for p in w.params if p.kind == 'enum']
    out += ['    struct trace_rec r;',
            '    if (traced) {',
            f'        trace_rec_begin(&r, "{w.symbol}");']
    out += ['    ' + line for line in (record_param(w, p) for p in w.params) if line]
    out += ['    ' + line for line in emit_inputs(w)]
    out.append('    }')
    if canon:
        out += ['    int how = BLAS_RAN_AS_MODE;',
                '    if (mode == BLAS_MODE_CANONICAL)',
                '        blas_canon_prepare();',
                f'    if (mode != BLAS_MODE_CANONICAL || ({canon}) != 0) {{',
                '        if (mode != BLAS_MODE_PASSTHROUGH)',
                '            blas_pin_vendor();',
                f'        {call_real}',
                '        if (mode == BLAS_MODE_CANONICAL)',
                '            how = BLAS_RAN_DECLINED;',
                '    }']
    else:
        out += ['    if (mode != BLAS_MODE_PASSTHROUGH)',
                '        blas_pin_vendor();',
                f'    {call_real}',
                '    int how = mode == BLAS_MODE_CANONICAL ? BLAS_RAN_NO_KERNEL : BLAS_RAN_AS_MODE;']
    out += ['    if (traced) {']
    out += ['    ' + record_operand(w, op, 'TRACE_ROLE_OUT', '    ') for op in w.operands if op.writes]
    if w.ret:
        out.append('        blas_rec_operand(&r, "result", TRACE_ROLE_OUT, '
                   'blas_digest_value(&ret, sizeof ret));')
    if w.result_by_pointer:
        out.append(f'        blas_rec_operand(&r, "result", TRACE_ROLE_OUT, '
                   f'blas_digest_value(ret, {w.prec.elem}));')
    out += ['        blas_note_run(&r, mode, how);',
            '        trace_rec_commit(&r);',
            '    }',
            '    guard_leave();']
    if w.ret:
        out.append('    return ret;')
    out.append('}')
    return '\n'.join(out)


HEADER = '''\
/* GENERATED by scripts/gen-blas-wrappers.py -- edit the script, not this file.
 *
 * BLAS interceptors: one exported wrapper per cblas and Fortran symbol, in
 * each naming variant (plain LP64, ILP64 "64_", numpy 2.x "scipy_..64_").
 * Each resolves its real symbol at first use; runs the call as [blas] mode
 * says (the vendor untouched, the vendor pinned, or detshim's canonical
 * kernel, falling back to pinned where there is none); and, when tracing,
 * records the call's parameters, how it ran, and the digests of the
 * operands the BLAS reads (IN, before the call) and writes (OUT, after it).
 * Inputs the BLAS does not read (C when beta == 0, A and B when
 * alpha == 0, ...) are not digested.
 * Prototypes are our own: no cblas.h, no link-time dependency on a BLAS.
 */
#include <stddef.h>
#include <stdint.h>

#include "detshim/blas.h"
#include "detshim/canonical.h"
#include "detshim/canonical_blas.h"
#include "detshim/core.h"
#include "detshim/policy.h"
#include "detshim/trace.h"
'''


def main(argv):
    wrappers = expand()
    if argv[1:] == ['--symbols']:
        print('\n'.join(w.symbol for w in wrappers))
        return 0
    if argv[1:]:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    print(HEADER)
    print('\n\n'.join(emit(w) for w in wrappers))
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
