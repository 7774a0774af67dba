#!/usr/bin/env python3
"""Prints build/gen/blas_wrappers.c: libdetshim's BLAS interceptors.

The generated code is thin: for each routine, a description (its parameters'
kinds and names, its operands' shapes and when the routine references them)
and an adapter to detshim's canonical kernel; for each exported symbol, its
signature and one call of the protocol (BLAS_WRAPPER, BLAS_FUNCTION in
shim/blas/blas.h). The protocol itself (validation, decision,
digests, record, FP environment) is written once, by hand, in
shim/blas/blas_call.c. The table ROUTINES is the source of truth:
one row per routine, expanded over precisions, over the cblas and Fortran
interfaces and over the symbol naming variants in VARIANTS. How to add a
routine: docs/blas.md.

Usage: gen-blas-wrappers.py             the C file, on stdout
       gen-blas-wrappers.py --symbols   the exported symbol names, one a line
"""
import re
import sys
from dataclasses import dataclass


# --- Precisions --------------------------------------------------------------

@dataclass(frozen=True)
class Prec:
    enum: str       # enum canon_type (shim/blas/canonical.h)
    real: str       # C type of a real scalar (and of nrm2/asum results)
    value: str      # C type of one element returned by value (dot)
    size: int       # bytes per element
    complex: bool


PRECS = {
    's': Prec('CANON_S', 'float', 'float', 4, False),
    'd': Prec('CANON_D', 'double', 'double', 8, False),
    'c': Prec('CANON_C', 'float', 'float _Complex', 8, True),
    'z': Prec('CANON_Z', 'double', 'double _Complex', 16, True),
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


# Checked against the wheels' exports (nm -D), docs/blas.md lists which.
VARIANTS = (
    Variant('', '', '_', 'int'),              # LP64: Debian's libopenblas, reference BLAS
    Variant('', '64_', '_64_', 'int64_t'),    # ILP64 OpenBLAS built with SYMBOLSUFFIX=64_
    # numpy 2.x wheels bundle scipy-openblas64 (libscipy_openblas64_*.so in
    # numpy.libs): ILP64 names such as scipy_cblas_dgemm64_, scipy_dgemm_64_.
    Variant('scipy_', '64_', '_64_', 'int64_t'),
    # scipy wheels bundle scipy-openblas32 (libscipy_openblas-*.so in
    # scipy.libs): LP64 names such as scipy_cblas_dgemm, scipy_dgemm_. Both
    # bundles live in one process once numpy and scipy are imported.
    Variant('scipy_', '', '_', 'int'),
)


# --- Parameters --------------------------------------------------------------
# A routine's parameters are a string of names in call order. Every name the
# reference BLAS uses has a kind here; a ':kind' after a name overrides it
# where a name means two things (c is gemm's matrix C but rot's cosine:
# 'c:real'). A trailing '*' marks an array the routine writes.

KINDS = {
    'order': 'BLAS_K_ORDER', 'trans': 'BLAS_K_TRANS', 'transa': 'BLAS_K_TRANS',
    'transb': 'BLAS_K_TRANS', 'uplo': 'BLAS_K_UPLO', 'side': 'BLAS_K_SIDE',
    'diag': 'BLAS_K_DIAG',
    'm': 'BLAS_K_DIM', 'n': 'BLAS_K_DIM', 'k': 'BLAS_K_DIM', 'kl': 'BLAS_K_DIM',
    'ku': 'BLAS_K_DIM',
    'lda': 'BLAS_K_LD', 'ldb': 'BLAS_K_LD', 'ldc': 'BLAS_K_LD',
    'incx': 'BLAS_K_INC', 'incy': 'BLAS_K_INC',
    'alpha': 'BLAS_K_SCALAR', 'beta': 'BLAS_K_SCALAR', 'sa': 'BLAS_K_SCALAR',
    'sb': 'BLAS_K_REAL', 's': 'BLAS_K_SCALAR',
    'a': 'BLAS_K_ARRAY', 'b': 'BLAS_K_ARRAY', 'c': 'BLAS_K_ARRAY', 'x': 'BLAS_K_ARRAY',
    'y': 'BLAS_K_ARRAY', 'ap': 'BLAS_K_ARRAY', 'param': 'BLAS_K_ARRAY',
    'd1': 'BLAS_K_ARRAY', 'd2': 'BLAS_K_ARRAY', 'x1': 'BLAS_K_ARRAY', 'y1': 'BLAS_K_ARRAY',
    'z': 'BLAS_K_ARRAY', 'ret': 'BLAS_K_RESULT',
}
MODIFIERS = {'real': 'BLAS_K_REAL', 'scalar': 'BLAS_K_SCALAR', 'array': 'BLAS_K_ARRAY',
             'sym': 'BLAS_K_TRANS_SYM', 'herm': 'BLAS_K_TRANS_HERM'}
ENUMS = {'BLAS_K_ORDER': 'order', 'BLAS_K_TRANS': 'trans', 'BLAS_K_TRANS_SYM': 'trans',
         'BLAS_K_TRANS_HERM': 'trans', 'BLAS_K_UPLO': 'uplo', 'BLAS_K_SIDE': 'side',
         'BLAS_K_DIAG': 'diag'}
INTS = {'BLAS_K_DIM', 'BLAS_K_LD', 'BLAS_K_INC'}


@dataclass(frozen=True)
class Param:
    name: str
    kind: str
    written: bool = False


def parse_params(spec):
    params = []
    for tok in spec.split():
        written = tok.endswith('*')
        name, _, mod = tok.rstrip('*').partition(':')
        if mod and mod not in MODIFIERS:
            raise ValueError(f'unknown kind {mod!r} in {tok!r}')
        if name not in KINDS:
            raise ValueError(f'unknown parameter {tok!r}')
        params.append(Param(name, MODIFIERS[mod] if mod else KINDS[name], written))
    return params


# --- Operands ----------------------------------------------------------------
# A dimension is a parameter name, or pick(sel, ch, a, b): a when the char
# parameter sel is ch, else b. The interpreter is shim/blas/blas_call.c.

def pick(sel, ch, a, b):
    return (sel, ch, a, b)


# A shape: (enum blas_shape, ptr, trans, uplo, diag, ld, kl, ku, rows, cols).
def general(ptr, trans, rows, cols, ld):
    """A rows x cols matrix op(X); trans None means X itself."""
    return ('BLAS_GENERAL', ptr, trans, None, None, ld, None, None, rows, cols)


def vector(ptr, n, inc):
    return ('BLAS_VECTOR', ptr, None, None, None, inc, None, None, n, n)


def triangle(ptr, uplo, diag, n, ld):
    """The referenced triangle of an n x n matrix; diag None means non-unit."""
    return ('BLAS_TRIANGLE', ptr, None, uplo, diag, ld, None, None, n, n)


def packed(ptr, uplo, diag, n):
    """The same triangle, packed column by column (row by row for 'R')."""
    return ('BLAS_PACKED', ptr, None, uplo, diag, None, None, None, n, n)


def band(ptr, m, n, kl, ku, ld):
    """An m x n band matrix in band storage (?gbmv)."""
    return ('BLAS_BAND', ptr, None, None, None, ld, kl, ku, m, n)


def band_tri(ptr, uplo, diag, n, k, ld):
    """The uplo triangle of an n x n band matrix, k diagonals beside the main one."""
    return ('BLAS_BAND_TRI', ptr, None, uplo, diag, ld, None, k, n, n)


def element(ptr):
    return ('BLAS_ELEMENT', ptr, None, None, None, None, None, None, None, None)


def rotm_param(ptr):
    return ('BLAS_ROTM_PARAM', ptr, None, None, None, None, None, None, None, None)


@dataclass(frozen=True)
class Operand:
    name: str
    shape: tuple
    flags: tuple


def In(name, shape, *when):
    return Operand(name, shape, ('BLAS_READ',) + when)


def Out(name, shape, *when):
    return Operand(name, shape, ('BLAS_WRITE',) + when)


def InOut(name, shape, *when):
    return Operand(name, shape, ('BLAS_READ', 'BLAS_WRITE') + when)


ALPHA = 'BLAS_IF_ALPHA'      # not read when alpha == 0
BETA = 'BLAS_IF_BETA'        # not read when beta == 0
POS_INC = 'BLAS_POS_INC'     # not referenced when its increment is <= 0
HERM = 'BLAS_HERM'           # the diagonal's imaginary parts are not read
REAL = 'BLAS_REAL_ELEM'      # a real element of a complex routine


# --- The routines ------------------------------------------------------------

def each(template, precs):
    return {p: template.format(p=p) for p in precs}


@dataclass(frozen=True)
class Routine:
    names: dict         # precision letter -> routine name
    params: str
    operands: tuple
    level: int
    ret: str = ''       # '', 'value' (an element), 'real', 'index', 'double'
    cblas_sub: bool = False  # also cblas_<name>_sub, result through a pointer
    quick: str = '0'    # routine-level quick return (BLAS_QUICK_*)
    cblas: bool = True  # False: a Fortran function only (scabs1)

    @property
    def base(self):
        """'gemm' for {s: sgemm, ...}: the common suffix after the precision
        letter; special names (csscal, scnrm2, isamax) keep theirs."""
        suffixes = {n[1:] for p, n in self.names.items() if n.startswith(p)}
        return suffixes.pop() if len(suffixes) == 1 else '/'.join(sorted(self.names.values()))

    @property
    def ident(self):
        """A C name for the routine's description, unique in the table."""
        base = self.base if len(self.names) > 1 else next(iter(self.names.values()))
        return re.sub(r'\W', '_', base) + '_' + ''.join(self.names)


XLEN_GEMV = pick('trans', 'N', 'n', 'm')
YLEN_GEMV = pick('trans', 'N', 'm', 'n')
SIDE_DIM = pick('side', 'L', 'm', 'n')
QUICK_AB = 'BLAS_QUICK_AB'
QUICK_ABK = 'BLAS_QUICK_ABK'
QUICK_ALPHA = 'BLAS_QUICK_ALPHA'

GER = dict(params='order m n alpha x incx y incy a* lda', level=2, quick=QUICK_ALPHA,
           operands=(In('x', vector('x', 'm', 'incx')), In('y', vector('y', 'n', 'incy')),
                     InOut('A', general('a', None, 'm', 'n', 'lda'))))
DOT = dict(params='n x incx y incy', level=1, ret='value',
           operands=(In('x', vector('x', 'n', 'incx')), In('y', vector('y', 'n', 'incy'))))
REDUCE = dict(params='n x incx', level=1, operands=(In('x', vector('x', 'n', 'incx'), POS_INC),))
SCAL = (InOut('x', vector('x', 'n', 'incx'), POS_INC),)
TRMM = dict(params='order side uplo transa diag m n alpha a lda b* ldb', level=3,
            operands=(In('A', triangle('a', 'uplo', 'diag', SIDE_DIM, 'lda'), ALPHA),
                      InOut('B', general('b', None, 'm', 'n', 'ldb'), ALPHA)))
TRMV = dict(params='order uplo trans diag n a lda x* incx', level=2,
            operands=(In('A', triangle('a', 'uplo', 'diag', 'n', 'lda')),
                      InOut('x', vector('x', 'n', 'incx'))))
ROT = dict(params='n x* incx y* incy c:real s:real', level=1,
           operands=(InOut('x', vector('x', 'n', 'incx')), InOut('y', vector('y', 'n', 'incy'))))
ROTM = dict(params='n x* incx y* incy param', level=1, quick='BLAS_QUICK_ROTM',
            operands=(In('param', rotm_param('param')), InOut('x', vector('x', 'n', 'incx')),
                      InOut('y', vector('y', 'n', 'incy'))))
# Level 2 symmetric and Hermitian: `herm` is () or (HERM,) for the matrix.
XY = (In('x', vector('x', 'n', 'incx'), ALPHA), InOut('y', vector('y', 'n', 'incy'), BETA))


def symv(params, shape, herm=()):
    return dict(params=params, level=2, quick=QUICK_AB,
                operands=(In('A', shape, ALPHA, *herm),) + XY)


def rank1(params, shape, herm=(), two=False):
    vectors = (In('x', vector('x', 'n', 'incx')),)
    if two:
        vectors += (In('y', vector('y', 'n', 'incy')),)
    return dict(params=params, level=2, quick=QUICK_ALPHA,
                operands=vectors + (InOut('A', shape, *herm),))


SYMV = 'order uplo n alpha a lda x incx beta y* incy'
SBMV = 'order uplo n k alpha a lda x incx beta y* incy'
SPMV = 'order uplo n alpha ap x incx beta y* incy'
TRI = triangle('a', 'uplo', None, 'n', 'lda')
BAND_TRI = band_tri('a', 'uplo', None, 'n', 'k', 'lda')
PACKED = packed('ap', 'uplo', None, 'n')
TBMV = dict(params='order uplo trans diag n k a lda x* incx', level=2,
            operands=(In('A', band_tri('a', 'uplo', 'diag', 'n', 'k', 'lda')),
                      InOut('x', vector('x', 'n', 'incx'))))
TPMV = dict(params='order uplo trans diag n ap x* incx', level=2,
            operands=(In('A', packed('ap', 'uplo', 'diag', 'n')),
                      InOut('x', vector('x', 'n', 'incx'))))
SYMM = dict(params='order side uplo m n alpha a lda b ldb beta c* ldc', level=3, quick=QUICK_AB)


def symm_operands(herm=()):
    return (In('A', triangle('a', 'uplo', None, SIDE_DIM, 'lda'), ALPHA, *herm),
            In('B', general('b', None, 'm', 'n', 'ldb'), ALPHA),
            InOut('C', general('c', None, 'm', 'n', 'ldc'), BETA))

# The flags follow the reference BLAS: with alpha == 0 the product is
# skipped (A, B, x are not read), with beta == 0 C or y is overwritten
# without being read, and a quick return references nothing. Such inputs
# may hold garbage, so digesting them would report differences the BLAS
# never saw. The rules per family are in docs/blas.md.
ROUTINES = (
    Routine(each('{p}gemm', 'sdcz'),
            'order transa transb m n k alpha a lda b ldb beta c* ldc', level=3, quick=QUICK_ABK,
            operands=(In('A', general('a', 'transa', 'm', 'k', 'lda'), ALPHA),
                      In('B', general('b', 'transb', 'k', 'n', 'ldb'), ALPHA),
                      InOut('C', general('c', None, 'm', 'n', 'ldc'), BETA))),
    Routine(each('{p}gemv', 'sdcz'),
            'order trans m n alpha a lda x incx beta y* incy', level=2, quick=QUICK_AB,
            operands=(In('A', general('a', None, 'm', 'n', 'lda'), ALPHA),
                      In('x', vector('x', XLEN_GEMV, 'incx'), ALPHA),
                      InOut('y', vector('y', YLEN_GEMV, 'incy'), BETA))),
    Routine(each('{p}ger', 'sd'), **GER),
    Routine(each('{p}geru', 'cz'), **GER),
    Routine(each('{p}gerc', 'cz'), **GER),
    Routine(each('{p}dot', 'sd'), **DOT),
    Routine(each('{p}dotu', 'cz'), **DOT, cblas_sub=True),
    Routine(each('{p}dotc', 'cz'), **DOT, cblas_sub=True),
    Routine(each('{p}axpy', 'sdcz'), 'n alpha x incx y* incy', level=1, quick=QUICK_ALPHA,
            operands=(In('x', vector('x', 'n', 'incx')), InOut('y', vector('y', 'n', 'incy')))),
    Routine(each('{p}scal', 'sdcz'), 'n alpha x* incx', level=1, operands=SCAL),
    Routine({'c': 'csscal', 'z': 'zdscal'}, 'n alpha:real x* incx', level=1, operands=SCAL),
    Routine({'s': 'snrm2', 'd': 'dnrm2', 'c': 'scnrm2', 'z': 'dznrm2'}, **REDUCE, ret='real'),
    Routine({'s': 'sasum', 'd': 'dasum', 'c': 'scasum', 'z': 'dzasum'}, **REDUCE, ret='real'),
    Routine(each('i{p}amax', 'sdcz'), **REDUCE, ret='index'),
    Routine(each('{p}copy', 'sdcz'), 'n x incx y* incy', level=1,
            operands=(In('x', vector('x', 'n', 'incx')), Out('y', vector('y', 'n', 'incy')))),
    Routine(each('{p}swap', 'sdcz'), 'n x* incx y* incy', level=1,
            operands=(InOut('x', vector('x', 'n', 'incx')), InOut('y', vector('y', 'n', 'incy')))),
    Routine(each('{p}rot', 'sd'), **ROT),
    Routine({'c': 'csrot', 'z': 'zdrot'}, **ROT),
    Routine(each('{p}symm', 'sdcz'), **SYMM, operands=symm_operands()),
    Routine(each('{p}syrk', 'sdcz'), 'order uplo trans:sym n k alpha a lda beta c* ldc',
            level=3, quick=QUICK_ABK,
            operands=(In('A', general('a', 'trans', 'n', 'k', 'lda'), ALPHA),
                      InOut('C', triangle('c', 'uplo', None, 'n', 'ldc'), BETA))),
    Routine(each('{p}syr2k', 'sdcz'), 'order uplo trans:sym n k alpha a lda b ldb beta c* ldc',
            level=3, quick=QUICK_ABK,
            operands=(In('A', general('a', 'trans', 'n', 'k', 'lda'), ALPHA),
                      In('B', general('b', 'trans', 'n', 'k', 'ldb'), ALPHA),
                      InOut('C', triangle('c', 'uplo', None, 'n', 'ldc'), BETA))),
    Routine(each('{p}trmm', 'sdcz'), **TRMM),
    Routine(each('{p}trsm', 'sdcz'), **TRMM),
    Routine(each('{p}trmv', 'sdcz'), **TRMV),
    Routine(each('{p}trsv', 'sdcz'), **TRMV),
    # The rest of the reference BLAS.
    Routine(each('{p}rotg', 'sd'), 'a* b* c* s:array*', level=1,
            operands=(InOut('a', element('a')), InOut('b', element('b')),
                      Out('c', element('c')), Out('s', element('s')))),
    Routine(each('{p}rotg', 'cz'), 'a* b c* s:array*', level=1,
            operands=(InOut('a', element('a')), In('b', element('b')),
                      Out('c', element('c'), REAL), Out('s', element('s')))),
    Routine(each('{p}rotmg', 'sd'), 'd1* d2* x1* y1:scalar param*', level=1,
            operands=(InOut('d1', element('d1')), InOut('d2', element('d2')),
                      InOut('x1', element('x1')), Out('param', rotm_param('param')))),
    Routine(each('{p}rotm', 'sd'), **ROTM),
    Routine({'s': 'sdsdot'}, 'n sb x incx y incy', level=1, ret='value', operands=DOT['operands']),
    Routine({'s': 'dsdot'}, 'n x incx y incy', level=1, ret='double', operands=DOT['operands']),
    Routine({'c': 'scabs1', 'z': 'dcabs1'}, 'z', level=1, ret='real', cblas=False,
            operands=(In('z', element('z')),)),
    Routine(each('{p}gbmv', 'sdcz'), 'order trans m n kl ku alpha a lda x incx beta y* incy',
            level=2, quick=QUICK_AB,
            operands=(In('A', band('a', 'm', 'n', 'kl', 'ku', 'lda'), ALPHA),
                      In('x', vector('x', XLEN_GEMV, 'incx'), ALPHA),
                      InOut('y', vector('y', YLEN_GEMV, 'incy'), BETA))),
    Routine(each('{p}symv', 'sd'), **symv(SYMV, TRI)),
    Routine(each('{p}hemv', 'cz'), **symv(SYMV, TRI, (HERM,))),
    Routine(each('{p}sbmv', 'sd'), **symv(SBMV, BAND_TRI)),
    Routine(each('{p}hbmv', 'cz'), **symv(SBMV, BAND_TRI, (HERM,))),
    Routine(each('{p}spmv', 'sd'), **symv(SPMV, PACKED)),
    Routine(each('{p}hpmv', 'cz'), **symv(SPMV, PACKED, (HERM,))),
    Routine(each('{p}tbmv', 'sdcz'), **TBMV),
    Routine(each('{p}tbsv', 'sdcz'), **TBMV),
    Routine(each('{p}tpmv', 'sdcz'), **TPMV),
    Routine(each('{p}tpsv', 'sdcz'), **TPMV),
    Routine(each('{p}syr', 'sd'), **rank1('order uplo n alpha x incx a* lda', TRI)),
    Routine(each('{p}her', 'cz'), **rank1('order uplo n alpha:real x incx a* lda', TRI, (HERM,))),
    Routine(each('{p}spr', 'sd'), **rank1('order uplo n alpha x incx ap*', PACKED)),
    Routine(each('{p}hpr', 'cz'), **rank1('order uplo n alpha:real x incx ap*', PACKED, (HERM,))),
    Routine(each('{p}syr2', 'sd'), **rank1('order uplo n alpha x incx y incy a* lda', TRI, two=True)),
    Routine(each('{p}her2', 'cz'),
            **rank1('order uplo n alpha x incx y incy a* lda', TRI, (HERM,), two=True)),
    Routine(each('{p}spr2', 'sd'), **rank1('order uplo n alpha x incx y incy ap*', PACKED, two=True)),
    Routine(each('{p}hpr2', 'cz'),
            **rank1('order uplo n alpha x incx y incy ap*', PACKED, (HERM,), two=True)),
    Routine(each('{p}hemm', 'cz'), **SYMM, operands=symm_operands((HERM,))),
    Routine(each('{p}herk', 'cz'), 'order uplo trans:herm n k alpha:real a lda beta:real c* ldc',
            level=3, quick=QUICK_ABK,
            operands=(In('A', general('a', 'trans', 'n', 'k', 'lda'), ALPHA),
                      InOut('C', triangle('c', 'uplo', None, 'n', 'ldc'), BETA, HERM))),
    Routine(each('{p}her2k', 'cz'),
            'order uplo trans:herm n k alpha a lda b ldb beta:real c* ldc', level=3, quick=QUICK_ABK,
            operands=(In('A', general('a', 'trans', 'n', 'k', 'lda'), ALPHA),
                      In('B', general('b', 'trans', 'n', 'k', 'ldb'), ALPHA),
                      InOut('C', triangle('c', 'uplo', None, 'n', 'ldc'), BETA, HERM))),
)


# --- Canonical kernels --------------------------------------------------------
# The call to detshim's own kernel for a routine, over the parameter names
# ('{result}' is where a function result goes). A routine absent here falls
# back to pinned in canonical mode, and its records say so.
GER_CANON = '{fn}({order}, {m}, {n}, {alpha}, {x}, {incx}, {y}, {incy}, {a}, {lda})'
DOT_CANON = '{fn}({n}, {x}, {incx}, {y}, {incy}, {result})'
REDUCE_CANON = '{fn}({n}, {x}, {incx}, {result})'
SCAL_CANON = '{fn}({n}, {alpha}, {x}, {incx})'
RANK2K_CANON = ('{fn}({order}, {uplo}, {trans}, {n}, {k}, {alpha}, {a}, {lda}, {b}, {ldb}, '
                '{beta}, {c}, {ldc})')
TRV_CANON = '{fn}({order}, {uplo}, {trans}, {diag}, {n}, {a}, {lda}, {x}, {incx})'
TRM_CANON = ('{fn}({order}, {side}, {uplo}, {transa}, {diag}, {m}, {n}, {alpha}, {a}, {lda}, '
             '{b}, {ldb})')
RANK_K_CANON = '{fn}({order}, {uplo}, {trans}, {n}, {k}, {alpha}, {a}, {lda}, {beta}, {c}, {ldc})'
SYMM_CANON = ('{fn}({order}, {side}, {uplo}, {m}, {n}, {alpha}, {a}, {lda}, {b}, {ldb}, {beta}, '
              '{c}, {ldc})')
ROT_CANON = '{fn}({n}, {x}, {incx}, {y}, {incy}, {c}, {s})'
CANONICAL = {
    'gemm': '{fn}({order}, {transa}, {transb}, {m}, {n}, {k}, {alpha}, {a}, {lda}, '
            '{b}, {ldb}, {beta}, {c}, {ldc})',
    'gemv': '{fn}({order}, {trans}, {m}, {n}, {alpha}, {a}, {lda}, {x}, {incx}, {beta}, {y}, '
            '{incy})',
    'ger': GER_CANON, 'geru': GER_CANON, 'gerc': GER_CANON,
    'dot': DOT_CANON, 'dotu': DOT_CANON, 'dotc': DOT_CANON,
    'nrm2': REDUCE_CANON, 'asum': REDUCE_CANON,
    'axpy': '{fn}({n}, {alpha}, {x}, {incx}, {y}, {incy})',
    'scal': SCAL_CANON, 'csscal/zdscal': SCAL_CANON,
    'trmv': TRV_CANON, 'trsv': TRV_CANON,
    'symv': '{fn}({order}, {uplo}, {n}, {alpha}, {a}, {lda}, {x}, {incx}, {beta}, {y}, {incy})',
    'syr2': '{fn}({order}, {uplo}, {n}, {alpha}, {x}, {incx}, {y}, {incy}, {a}, {lda})',
    'syr': '{fn}({order}, {uplo}, {n}, {alpha}, {x}, {incx}, {a}, {lda})',
    'hemv': '{fn}({order}, {uplo}, {n}, {alpha}, {a}, {lda}, {x}, {incx}, {beta}, {y}, {incy})',
    'her': '{fn}({order}, {uplo}, {n}, {alpha}, {x}, {incx}, {a}, {lda})',
    'her2': '{fn}({order}, {uplo}, {n}, {alpha}, {x}, {incx}, {y}, {incy}, {a}, {lda})',
    'syrk': RANK_K_CANON, 'herk': RANK_K_CANON,
    'symm': SYMM_CANON, 'hemm': SYMM_CANON,
    'trmm': TRM_CANON, 'trsm': TRM_CANON,
    'syr2k': RANK2K_CANON, 'her2k': RANK2K_CANON,
    'rot': ROT_CANON, 'csrot/zdrot': ROT_CANON,
    'rotm': '{fn}({n}, {x}, {incx}, {y}, {incy}, {param})',
}
# No kernel of our own, none needed: they do no floating-point arithmetic
# (iamax's |re| + |im| is one rounded add every kernel does alike), so the
# vendor's bits cannot vary with its threads (docs/canonical-blas.md,
# tests/unit/test_canonical_exact.c). Their records say so.
EXACT = {n for p in 'sdcz' for n in (f'{p}copy', f'{p}swap', f'i{p}amax')}


# --- C emitters --------------------------------------------------------------

def dim(params, d):
    index = {p.name: i for i, p in enumerate(params)}
    if d is None:
        return 'BLAS_DIM_NONE'
    if isinstance(d, tuple):
        sel, ch, a, b = d
        return f"BLAS_DIM_IF({index[sel]}, '{ch}', {index[a]}, {index[b]})"
    return f'BLAS_DIM({index[d]})'


def emit_form(rt):
    params = parse_params(rt.params)
    index = {p.name: i for i, p in enumerate(params)}
    ix = lambda name: index[name] if name else -1
    out = [f'static const uint8_t {rt.ident}_kinds[] = {{ {", ".join(p.kind for p in params)} }};',
           f'static const char *const {rt.ident}_names[] = '
           f'{{ {", ".join(chr(34) + p.name + chr(34) for p in params)} }};',
           f'static const uint8_t {rt.ident}_name_lens[] = '
           f'{{ {", ".join(str(len(p.name)) for p in params)} }};',
           f'static const struct blas_operand {rt.ident}_operands[] = {{']
    for op in rt.operands:
        shape, ptr, trans, uplo, diag, ld, kl, ku, rows, cols = op.shape
        out.append(f'    {{ "{op.name}", {len(op.name)}, {shape}, {" | ".join(op.flags)}, {ix(ptr)}, {ix(trans)}, '
                   f'{ix(uplo)}, {ix(diag)}, {ix(ld)}, {ix(kl)}, {ix(ku)}, {dim(params, rows)}, '
                   f'{dim(params, cols)} }},')
    out.append('};')
    out.append(f'static const struct blas_form {rt.ident}_form = {{ {rt.level}, {len(params)}, '
               f'{len(rt.operands)}, {rt.quick}, {ix("alpha" if "alpha" in index else None)}, '
               f'{ix("beta" if "beta" in index else None)}, {ix("k" if "k" in index else None)}, '
               f'{int("order" in index)}, {rt.ident}_kinds, {rt.ident}_names, {rt.ident}_name_lens, '
               f'{rt.ident}_operands }};')
    return out


def canon_arg(p, i, prec):
    """The canonical kernel's argument for parameter p, from v[i]."""
    if p.kind in ENUMS:
        return f'v[{i}].ch'
    if p.kind in INTS:
        return f'v[{i}].i'
    if p.kind == 'BLAS_K_REAL' or (p.kind == 'BLAS_K_SCALAR' and not prec.complex):
        return f'*(const {prec.real} *)v[{i}].p'
    return f'v[{i}].p'


def emit_routine(rt, letter, name):
    prec = PRECS[letter]
    params = parse_params(rt.params)
    template = CANONICAL.get(rt.base)
    canon = 'NULL'
    out = []
    if template:
        env = {p.name: canon_arg(p, i, prec) for i, p in enumerate(params)}
        call = template.format(fn=f'canon_{name}', result='result', **env)
        out += [f'static int canon_{name}_v(const union blas_val *v, void *result)', '{']
        if '{result}' not in template:
            out.append('    (void)result;')
        out += [f'    return {call};', '}']
        canon = f'canon_{name}_v'
    exact = int(name in EXACT)
    out.append(f'static const struct blas_routine r_{name} = '
               f'{{ "{name}", {prec.enum}, {exact}, &{rt.ident}_form, {canon} }};')
    return out


def param_type(p, prec, variant, fortran):
    """The C type of parameter p (cblas by value, Fortran by pointer)."""
    if p.kind in ENUMS:
        return 'const char *' if fortran else 'const int'
    if p.kind in INTS:
        base = f'const {variant.int_type}'
    elif p.kind == 'BLAS_K_REAL' or (p.kind == 'BLAS_K_SCALAR' and not prec.complex):
        base = f'const {prec.real}'
    elif p.kind == 'BLAS_K_SCALAR':
        return 'const void *'
    elif p.kind == 'BLAS_K_ARRAY':
        data = 'void' if prec.complex else prec.real
        return f'{"" if p.written else "const "}{data} *'
    else:
        return 'void *'
    return base + ' *' if fortran else base


def declare(typ, name):
    return f'{typ}{name}' if typ.endswith('*') else f'{typ} {name}'


def return_type(rt, prec, variant, fortran):
    if rt.ret == 'value':
        return prec.value
    if rt.ret == 'real':
        return prec.real
    if rt.ret == 'double':
        return 'double'
    if rt.ret == 'index':
        # CBLAS_INDEX is size_t; the Fortran function returns a blasint.
        return variant.int_type if fortran else 'size_t'
    return ''


def emit_wrapper(symbol, name, params, prec, variant, fortran, ret):
    """One exported symbol: its signature, and the protocol's one call."""
    flags = ' | '.join(f for f, on in (('BLAS_SITE_F77', fortran),
                                       ('BLAS_SITE_INT64', variant.int_type != 'int')) if on) or '0'
    sizes = {'float': 4, 'double': 8, 'int': 4, 'float _Complex': 8, 'double _Complex': 16}
    size = sizes.get(ret, 8) if ret else prec.size
    types = [param_type(p, prec, variant, fortran) for p in params]
    decl = ', '.join(declare(t, p.name) for p, t in zip(params, types))
    by_value = lambda t: not fortran and not t.endswith('*')
    argv = ', '.join(f'&{p.name}' if by_value(t) else p.name for p, t in zip(params, types))
    args = ', '.join(p.name for p in params)
    if ret:
        return [f'BLAS_FUNCTION({ret}, {symbol}, r_{name}, {flags}, {size}, ({decl}),',
                f'              ({args}), ({argv}))']
    result = 'ret' if any(p.kind == 'BLAS_K_RESULT' for p in params) else 'NULL'
    return [f'BLAS_WRAPPER({symbol}, r_{name}, {flags}, {size if result != "NULL" else 0}, ({decl}),',
            f'             ({args}), ({argv}), {result})']


def wrappers():
    """(symbol, routine name, params, prec, variant, fortran, return type) per symbol."""
    for variant in VARIANTS:
        for rt in ROUTINES:
            params = parse_params(rt.params)
            f77_params = [q for q in params if q.name != 'order']
            for p, name in rt.names.items():
                prec = PRECS[p]
                if rt.cblas:
                    yield (variant.cblas(name), name, params, prec, variant, False,
                           return_type(rt, prec, variant, False))
                if rt.cblas_sub:
                    yield (variant.cblas(name + '_sub'), name, params + [Param('ret', 'BLAS_K_RESULT')],
                           prec, variant, False, '')
                yield (variant.f77(name), name, f77_params, prec, variant, True,
                       return_type(rt, prec, variant, True))


HEADER = '''\
/* GENERATED by scripts/gen-blas-wrappers.py -- edit the script, not this file.
 *
 * BLAS interceptors: one exported wrapper per cblas and Fortran symbol, in
 * each naming variant (plain LP64, ILP64 "64_", the wheels' "scipy_" and
 * "scipy_..64_"), each one call of the protocol in shim/blas/blas_call.c,
 * and the descriptions of the routines' parameters and operands it reads.
 * Prototypes are our own: no cblas.h, no link-time dependency on a BLAS.
 */
#include <stddef.h>
#include <stdint.h>

#include "blas/blas.h"
#include "blas/canonical.h"
#include "core/core.h"
'''


def main(argv):
    if argv[1:] == ['--symbols']:
        print('\n'.join(w[0] for w in wrappers()))
        return 0
    if argv[1:]:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    out = [HEADER]
    seen = set()
    for rt in ROUTINES:
        if rt.ident not in seen:
            seen.add(rt.ident)
            out += emit_form(rt)
        for letter, name in rt.names.items():
            out += emit_routine(rt, letter, name)
        out.append('')
    for w in wrappers():
        out += emit_wrapper(*w)
    print('\n'.join(out).rstrip())
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
