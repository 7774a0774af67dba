#!/usr/bin/env python3
"""Lists the BLAS symbols that shared libraries export (nm -D) and the ones
libdetshim does not wrap, for test-blas-wheels.sh.

A BLAS symbol is a reference BLAS or CBLAS routine name (the Netlib list
below) in any naming form a wheel uses: an optional prefix (scipy_), cblas_
or not, and the LP64 or ILP64 suffix (cblas_dgemm, cblas_dgemm64_, dgemm_,
dgemm_64_). OpenBLAS's own extensions (?gemmt, ?omatcopy, ?axpby, batched
GEMM, bfloat16) and LAPACK are not BLAS routines and are not listed.

Usage: blas_exports.py SHIM LIB...   prints one line per library, then one
per unwrapped symbol; exit 0 when every BLAS symbol found is wrapped, 1
when one is not, 2 when a library cannot be read.
"""
import re
import subprocess
import sys

PRECISE = {
    'sdcz': 'gemm symm syrk syr2k trmm trsm gemv gbmv trmv tbmv tpmv trsv tbsv tpsv '
            'swap scal copy axpy rotg',
    'sd': 'symv sbmv spmv ger syr spr syr2 spr2 dot rot rotm rotmg',
    'cz': 'hemm herk her2k hemv hbmv hpmv geru gerc her hpr her2 hpr2 dotu dotc',
}
SPECIAL = ('sdsdot dsdot csscal zdscal csrot zdrot snrm2 dnrm2 scnrm2 dznrm2 sasum dasum '
           'scasum dzasum isamax idamax icamax izamax scabs1 dcabs1').split()
ROUTINES = {p + r for precs, names in PRECISE.items() for p in precs for r in names.split()}
ROUTINES |= set(SPECIAL)
# The cblas forms of the complex dots also return through a pointer.
CBLAS_EXTRA = {f'{p}{r}_sub' for p in 'cz' for r in ('dotu', 'dotc')}

FORM = re.compile(r'^(?P<prefix>scipy_)?(?:(?P<cblas>cblas_)(?P<cname>[a-z0-9_]+?)(?:64_)?'
                  r'|(?P<fname>[a-z0-9]+)_(?:64_)?)$')


def exported(path):
    out = subprocess.run(['nm', '-D', '--defined-only', path], capture_output=True, text=True)
    if out.returncode != 0:
        raise OSError(out.stderr.strip() or f'nm failed on {path}')
    return {line.split()[-1] for line in out.stdout.splitlines() if line.split()}


def routine_of(symbol):
    """The reference routine a symbol names, or None."""
    m = FORM.match(symbol)
    if not m:
        return None
    name = m.group('cname') if m.group('cblas') else m.group('fname')
    return name if name in ROUTINES or (m.group('cblas') and name in CBLAS_EXTRA) else None


def main(argv):
    if len(argv) < 3:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    try:
        wrapped = exported(argv[1])
        missing = []
        for lib in argv[2:]:
            blas = sorted(s for s in exported(lib) if routine_of(s))
            gone = [s for s in blas if s not in wrapped]
            print(f'{lib}: {len(blas)} BLAS symbols, {len(gone)} not wrapped')
            missing += gone
    except OSError as e:
        print(f'blas_exports: {e}', file=sys.stderr)
        return 2
    for s in missing:
        print(f'not wrapped: {s}')
    return 1 if missing else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
