#!/bin/sh
# PyTorch's wheels import cuBLAS, cuBLASLt and cuDNN by versioned names
# (cublasGemmEx@libcublas.so.13, read with nm from libtorch_cuda.so), and
# the shim defines them unversioned. The dynamic linker binds a versioned
# reference to an unversioned definition of the same name found first in
# the search order, so the preloaded shim still catches them: checked here
# on a program linked against a fake libcublas.so.13 that carries NVIDIA's
# version node (tests/fakes/cuda/cublas.map; tests/programs/gpu_versioned.c).
. "$(dirname "$0")/lib.sh"
P=$PROGS/gpu_versioned
unset DETSHIM_POLICY DETSHIM_SEED

nm -D --undefined-only "$P" > "$WORK/imports"
expect_grep "the program imports cublasGemmEx versioned, as libtorch_cuda.so does" \
    "U cublasGemmEx@libcublas\.so\.13$" "$WORK/imports"
nm -D --defined-only "$SHIM" > "$WORK/exports"
expect_grep "the shim defines cublasGemmEx without a version" " T cublasGemmEx$" "$WORK/exports"

$P > "$WORK/bare.out"
shim "$WORK/a" $P > "$WORK/a.out"
expect_eq "under the shim the program runs with the same result" \
    "$(cat "$WORK/bare.out")" "$(cat "$WORK/a.out")"
$DETDIFF --show "$WORK/a" > "$WORK/a.show"
expect_grep "the versioned import reached the shim's wrapper" \
    "cublasGemmEx transa=N transb=N m=8 n=6 k=5 .* C:out:48x4:" "$WORK/a.show"
expect_grep "and so did cublasCreate_v2, pinned" "cublasCreate_v2 .*cuda.atomics=not_allowed" \
    "$WORK/a.show"
finish
