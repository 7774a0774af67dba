#!/bin/sh
# The cuBLAS GEMM family's _64 entry points (64-bit indices, cuBLAS 12 and
# later) are pinned and traced like their int forms. gpu_gemm64
# (tests/programs/gpu_gemm64.c) calls each of six entry points both ways on
# the same inputs, on a handle that asks for atomics: without the shim the
# fake cuBLAS varies every result; under it, the two forms agree, runs
# agree, and each pair of records digests the same operands.
. "$(dirname "$0")/lib.sh"
P=$PROGS/gpu_gemm64
unset DETSHIM_POLICY DETSHIM_SEED

$P > "$WORK/bare1.out" && $P > "$WORK/bare2.out"
expect_ne "without the shim, two runs differ" "$(cat "$WORK/bare1.out")" "$(cat "$WORK/bare2.out")"

shim "$WORK/a" $P > "$WORK/a.out"
shim "$WORK/b" $P > "$WORK/b.out"
expect_eq "under the shim, two runs agree" "$(cat "$WORK/a.out")" "$(cat "$WORK/b.out")"
expect_eq "under the shim, each int form and its _64 form give the same bits" 0 \
    "$(awk '$2 != $3' "$WORK/a.out" | wc -l | tr -d ' ')"
"$DETDIFF" "$WORK/a" "$WORK/b" > /dev/null
expect_eq "under the shim, the traces diff identical" 0 $?
"$DETDIFF" --show "$WORK/a" > "$WORK/a.show"
# The operands of a record: what --show prints between the first two '|'.
operands() { grep -E "^ +[0-9]+ $1 " "$WORK/a.show" | head -1 | cut -d'|' -f2; }
for api in cublasSgemm_v2 cublasSgemmStridedBatched cublasSgemmBatched cublasGemmEx \
    cublasGemmStridedBatchedEx cublasGemmBatchedEx; do
    expect_grep "${api}_64 is traced" "^ +[0-9]+ ${api}_64 " "$WORK/a.show"
    expect_eq "${api}_64 records the same operand digests as $api" \
        "$(operands "$api")" "$(operands "${api}_64")"
done
finish
