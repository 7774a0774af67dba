#!/bin/sh
# needs: venv
# numpy and PyTorch from Debian, and numpy 2.x from PyPI (whose bundled
# OpenBLAS exports scipy_-prefixed, 64_-suffixed names), traced twice:
# identical traces, unchanged results, and the BLAS calls really traced.
. "$(dirname "$0")/lib.sh"
# Passthrough: these checks compare against the vendor BLAS's own bits.
export DETSHIM_POLICY=passthrough
NP=$TOP/tests/programs/np_prog.py
TORCH=$TOP/tests/programs/torch_prog.py

plain=$($PY $NP)
traced=$(shim "$WORK/np-a" $PY $NP)
shim "$WORK/np-b" $PY $NP > /dev/null
expect_eq "Debian numpy results without vs with the shim" "$plain" "$traced"
$DETDIFF "$WORK/np-a" "$WORK/np-b" > "$WORK/np.out"
expect_eq "Debian numpy: detdiff exit" 0 $?
$DETDIFF --show "$WORK/np-a" > "$WORK/np-show.out"
expect_grep "Debian numpy matmul traced" " cblas_dgemm " "$WORK/np-show.out"
expect_grep "Debian numpy complex matmul traced" " cblas_zgemm " "$WORK/np-show.out"

plain=$($PY $TORCH)
traced=$(shim "$WORK/torch-a" $PY $TORCH)
shim "$WORK/torch-b" $PY $TORCH > /dev/null
expect_eq "PyTorch weights without vs with the shim" "$plain" "$traced"
$DETDIFF "$WORK/torch-a" "$WORK/torch-b" > "$WORK/torch.out"
expect_eq "PyTorch: detdiff exit" 0 $?
$DETDIFF --show "$WORK/torch-a" > "$WORK/torch-show.out"
# libtorch reaches its BLAS (loaded RTLD_LOCAL) through sgemm_.
expect_grep "PyTorch's sgemm_ calls traced" " sgemm_ .*libtorch_cpu" "$WORK/torch-show.out"

if [ -x "$VENV_PY" ]; then
    plain=$($VENV_PY $NP)
    traced=$(shim "$WORK/np2-a" $VENV_PY $NP)
    shim "$WORK/np2-b" $VENV_PY $NP > /dev/null
    expect_eq "numpy 2.x results without vs with the shim" "$plain" "$traced"
    case $plain in 2.*) pass ;; *) fail "venv numpy is not 2.x: $plain" ;; esac
    $DETDIFF "$WORK/np2-a" "$WORK/np2-b" > "$WORK/np2.out"
    expect_eq "numpy 2.x: detdiff exit" 0 $?
    $DETDIFF --show "$WORK/np2-a" > "$WORK/np2-show.out"
    expect_grep "numpy 2.x matmul traced under its prefixed name" " scipy_cblas_dgemm64_ " "$WORK/np2-show.out"
    expect_grep "numpy 2.x complex matmul traced" " scipy_cblas_zgemm64_ " "$WORK/np2-show.out"
else
    fail "no venv at $VENV_PY: run scripts/install-deps.sh (make test does)"
fi
finish
