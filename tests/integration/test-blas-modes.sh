#!/bin/sh
# Deterministic BLAS. Canonical mode (the default policy): the issue's
# seeded PyTorch MLP ends with one weights hash and identical traces across
# OPENBLAS_CORETYPE x OMP_NUM_THREADS, where without the shim the hashes
# differ; every kernel path gives the same bits. (The policy pins the
# user's OMP_NUM_THREADS; the canonical kernels' own thread count is
# varied in the unit tests, test_canonical_gemm.) Pinned mode: runs repeat
# and the trace shows the pinned thread count.
# slow: 50
. "$(dirname "$0")/lib.sh"
MLP=$TOP/tests/programs/torch_mlp.py
P=$PROGS/blas_prog

plain_hashes=""
first=""
for coretype in Haswell Sandybridge Prescott; do
    for threads in 1 2; do
        cfg="$coretype-$threads"
        plain=$(OPENBLAS_CORETYPE=$coretype OMP_NUM_THREADS=$threads $PY "$MLP")
        plain_hashes="$plain_hashes $plain"
        canon=$(OPENBLAS_CORETYPE=$coretype OMP_NUM_THREADS=$threads shim "$WORK/$cfg" $PY "$MLP")
        if [ -z "$first" ]; then
            first=$canon
            first_cfg=$cfg
        else
            expect_eq "canonical weights, $cfg vs $first_cfg" "$first" "$canon"
            $DETDIFF "$WORK/$first_cfg" "$WORK/$cfg" > "$WORK/$cfg.diff"
            expect_eq "canonical traces, $cfg vs $first_cfg: detdiff exit" 0 $?
        fi
    done
done
distinct=$(echo $plain_hashes | tr ' ' '\n' | sort -u | wc -l)
if [ "$distinct" -gt 1 ]; then pass; else
    fail "without the shim all 6 configurations gave one hash: this test proves nothing here"
fi
echo "   (without the shim: $distinct distinct weight hashes over 6 configurations)"
$DETDIFF --show "$WORK/$first_cfg" > "$WORK/show.out"
expect_grep "canonical: the header names the order versions the bits follow" \
    "^  canonical_orders = lanes=2;snrm2=2;trsm=2;hemm=1;herk=1;rot=1;sym=1;other=1$" "$WORK/show.out"
expect_grep "PyTorch's sgemm_ ran canonical" " sgemm_ .*blas.mode=canonical" "$WORK/show.out"

# Every instruction-set path gives the same bits (the C program's GEMMs
# are canonical; its other routines fall back to pinned).
ref=$(LD_PRELOAD=$SHIM DETSHIM_ISA=scalar $P)
if grep -qw avx2 /proc/cpuinfo; then
    expect_eq "canonical results, DETSHIM_ISA=avx2 vs scalar" "$ref" "$(LD_PRELOAD=$SHIM DETSHIM_ISA=avx2 $P)"
else
    echo "   (this CPU has no avx2: that path is not compared here)"
fi
# AVX-512 runs where the CPU and OS have it (avx512f/dq/vl/bw, zmm state
# enabled), with the same bits; elsewhere asking for it is refused with the
# paths that exist, rather than silently running another.
if grep -qw avx512f /proc/cpuinfo && grep -qw avx512dq /proc/cpuinfo &&
    grep -qw avx512vl /proc/cpuinfo && grep -qw avx512bw /proc/cpuinfo; then
    expect_eq "canonical results, DETSHIM_ISA=avx512 vs scalar" "$ref" "$(LD_PRELOAD=$SHIM DETSHIM_ISA=avx512 $P)"
else
    LD_PRELOAD=$SHIM DETSHIM_ISA=avx512 $P > /dev/null 2> "$WORK/avx512.err"
    expect_eq "DETSHIM_ISA=avx512 (not in this CPU): exit" 2 $?
    expect_grep "DETSHIM_ISA=avx512: message" "^detshim: DETSHIM_ISA=avx512: this CPU or build has no such path" "$WORK/avx512.err"
fi
LD_PRELOAD=$SHIM DETSHIM_ISA=mmx $P > /dev/null 2> "$WORK/isa.err"
expect_eq "DETSHIM_ISA=mmx: exit" 2 $?
expect_grep "DETSHIM_ISA=mmx: message" "^detshim: DETSHIM_ISA=mmx is not scalar, avx2, avx512 or auto" "$WORK/isa.err"

# Canonical mode says, per call, which routines fell back to pinned.
shim "$WORK/fallback" $P > /dev/null
$DETDIFF --show "$WORK/fallback" > "$WORK/fallback.out"
expect_grep "cblas_dgemm canonical" " cblas_dgemm .*blas.mode=canonical" "$WORK/fallback.out"
expect_grep "a routine exact by construction says so" \
    " cblas_idamax .*blas.mode=exact \\(vendor kernel, no arithmetic\\) blas.threads=1" \
    "$WORK/fallback.out"
shim "$WORK/fallback-more" $PROGS/blas_more 1 > /dev/null
$DETDIFF --show "$WORK/fallback-more" > "$WORK/fallback-more.out"
expect_grep "a routine without a kernel says so" \
    " cblas_zhbmv .*blas.mode=pinned \\(no canonical kernel\\) blas.threads=1" \
    "$WORK/fallback-more.out"
expect_grep "symv has its kernel (since sym=1)" " cblas_dsymv .*blas.mode=canonical" \
    "$WORK/fallback-more.out"
expect_grep "symv from Fortran" " dsymv_ .*blas.mode=canonical" "$WORK/fallback-more.out"
expect_grep "syr2 has its kernel (since sym=1)" " cblas_dsyr2 .*blas.mode=canonical" \
    "$WORK/fallback-more.out"
expect_grep "syr has its kernel (since sym=1)" " cblas_dsyr .*blas.mode=canonical" \
    "$WORK/fallback-more.out"
expect_grep "hemv has its kernel (since sym=1)" " cblas_zhemv .*blas.mode=canonical" \
    "$WORK/fallback-more.out"

# Pinned mode: the vendor BLAS with a fixed thread count, recorded.
printf '[blas]\nmode = pinned\nthreads = 2\n' > "$WORK/pinned.policy"
DETSHIM_POLICY=$WORK/pinned.policy shim "$WORK/pin-a" $P > /dev/null
DETSHIM_POLICY=$WORK/pinned.policy shim "$WORK/pin-b" $P > /dev/null
$DETDIFF "$WORK/pin-a" "$WORK/pin-b" > "$WORK/pin.diff"
expect_eq "pinned: two runs diff identical" 0 $?
$DETDIFF --show "$WORK/pin-a" > "$WORK/pin.show"
expect_grep "pinned: the thread count is in every record" " cblas_dgemm .*blas.mode=pinned blas.threads=2" "$WORK/pin.show"
expect_no_grep "pinned: no canonical order versions in the header" "canonical_orders" "$WORK/pin.show"
DETSHIM_LOG=info DETSHIM_POLICY=$WORK/pinned.policy LD_PRELOAD=$SHIM $P > /dev/null 2> "$WORK/pin.log"
expect_grep "pinned: applied through OpenBLAS's own control" \
    "BLAS pinned to 2 threads via openblas_set_num_threads" "$WORK/pin.log"

# Switches the vendors read from the environment at their own start.
expect_eq "pinned/canonical: MKL reproducibility and no dynamic threads" "AUTO FALSE FALSE" \
    "$(OMP_DYNAMIC=TRUE LD_PRELOAD=$SHIM sh -c 'echo $MKL_CBWR $MKL_DYNAMIC $OMP_DYNAMIC')"
expect_eq "passthrough leaves them alone" "TRUE" \
    "$(OMP_DYNAMIC=TRUE DETSHIM_POLICY=passthrough LD_PRELOAD=$SHIM sh -c 'echo $MKL_CBWR$OMP_DYNAMIC')"
finish
