#!/bin/sh
# The BLAS that PyPI wheels bundle reaches the shim: scipy's LP64 OpenBLAS
# (scipy_dgemm_, scipy_cblas_dgemm) and numpy's ILP64 one
# (scipy_cblas_dgemm64_), both in one process; and every BLAS symbol those
# libraries export (nm -D) is one the shim wraps.
. "$(dirname "$0")/lib.sh"
[ -x "$VENV_PY" ] || skip "no PyPI venv at build/venv (make deps installs it)"
SITE=$("$VENV_PY" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
"$VENV_PY" -c 'import scipy' 2>/dev/null || skip "no scipy in the venv (make deps installs it)"
libs=$(ls "$SITE"/numpy.libs/*openblas*.so* "$SITE"/scipy.libs/*openblas*.so* 2>/dev/null)
[ -n "$libs" ] || skip "no bundled OpenBLAS in the venv's numpy.libs or scipy.libs"

cat > "$WORK/prog.py" <<'PY'
import numpy as np
import scipy.linalg.blas as blas
a = np.asfortranarray(np.arange(6.0).reshape(2, 3))
b = np.asfortranarray(np.arange(12.0).reshape(3, 4))
print(blas.dgemm(1.0, a, b).sum(), (a @ b).sum())
PY
plain=$("$VENV_PY" "$WORK/prog.py")
traced=$(DETSHIM_POLICY=passthrough shim "$WORK/t" "$VENV_PY" "$WORK/prog.py")
expect_eq "scipy and numpy results, traced vs not" "$plain" "$traced"
$DETDIFF --show "$WORK/t" > "$WORK/show.out"
expect_grep "scipy.linalg.blas.dgemm traced (scipy's LP64 scipy_dgemm_)" \
    ' scipy_dgemm_ transa=N transb=N m=2 n=4 k=3 .* A:in:6x8:' "$WORK/show.out"
expect_grep "numpy's matmul traced in the same process (ILP64 scipy_cblas_dgemm64_)" \
    ' scipy_cblas_dgemm64_ order=R .* m=2 n=4 k=3 .* A:in:6x8:' "$WORK/show.out"

# shellcheck disable=SC2086
$PY "$TOP/tests/integration/blas_exports.py" "$SHIM" $libs > "$WORK/exports.out"
expect_eq "every BLAS symbol of the wheels' libraries wrapped: exit" 0 $?
expect_no_grep "each of the wheels' libraries has BLAS symbols to check" ': 0 BLAS symbols' \
    "$WORK/exports.out"
sed 's/^/   /' "$WORK/exports.out" | head -8
finish
