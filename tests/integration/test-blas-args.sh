#!/bin/sh
# Calls as the reference BLAS testers make them: an illegal call does not
# take the traced program down and still reaches the vendor's XERBLA, and
# operands the routine's specification does not reference (k = 0, alpha =
# 0, beta = 0 or 1, the other triangle, a rejected call) are never
# digested, so two runs that differ only there diff identical.
. "$(dirname "$0")/lib.sh"
P=$PROGS/blas_args

# dgemm_ with m = 2^27, lda = m, ldc = 1: digesting before validating
# would read 1 GiB from a 32-byte array.
for policy in passthrough default; do
    DETSHIM_POLICY=$policy shim "$WORK/illegal-$policy" $P illegal > "$WORK/illegal-$policy.out" 2>&1
    expect_eq "illegal dgemm_ traced ($policy): exit" 0 $?
    expect_grep "illegal dgemm_ ($policy): the program goes on" '^survived$' "$WORK/illegal-$policy.out"
    expect_grep "illegal dgemm_ ($policy): the vendor's XERBLA reports it" \
        'parameter number +13 had an illegal value' "$WORK/illegal-$policy.out"
    $DETDIFF --show "$WORK/illegal-$policy" > "$WORK/illegal-$policy.show"
    expect_grep "illegal dgemm_ ($policy): recorded as rejected, parameters kept, no operands" \
        ' dgemm_ .*m=134217728 .*ldc=1 \| \(no operands\) \| blas.rejected=parameter 13 \(ldc\)' \
        "$WORK/illegal-$policy.show"
done
expect_grep "illegal dgemm_ in canonical mode: the vendor ran it, not the kernel" \
    ' dgemm_ .*blas.mode=pinned \(canonical kernel declined the arguments\)' \
    "$WORK/illegal-default.show"

# Passthrough runs the vendor's kernels, and some read what the
# specification says they do not: OpenBLAS 0.3.21's SkylakeX small-matrix
# dgemm forms alpha*A*B with alpha = 0, so garbage NaNs in A reach C. The
# shim does not hide that: the runs then differ as the vendor's own do,
# and detdiff names that call as the first difference.
for seed in 1 2; do
    $P garbage $seed > "$WORK/vendor$seed.out" 2> /dev/null
done
vendor_reads=0
cmp -s "$WORK/vendor1.out" "$WORK/vendor2.out" || vendor_reads=1
for policy in passthrough default; do
    for seed in 1 2; do
        DETSHIM_POLICY=$policy shim "$WORK/g$seed-$policy" $P garbage $seed > "$WORK/g$seed-$policy.out"
    done
    $DETDIFF "$WORK/g1-$policy" "$WORK/g2-$policy" > "$WORK/g-$policy.diff"
    rc=$?
    if [ $policy = passthrough ] && [ $vendor_reads = 1 ]; then
        echo "   (the vendor BLAS here reads unreferenced operands: passthrough differs as it does)"
        expect_eq "passthrough gives the vendor's own results" \
            "$(cat "$WORK/vendor1.out" "$WORK/vendor2.out")" \
            "$(cat "$WORK/g1-$policy.out" "$WORK/g2-$policy.out")"
        expect_eq "vendor reading unreferenced operands: detdiff exit (passthrough)" 1 $rc
        expect_grep "vendor reading unreferenced operands: detdiff names the call (passthrough)" \
            'same call, same inputs, different outputs' "$WORK/g-$policy.diff"
    else
        expect_eq "garbage in unreferenced operands changes no result ($policy)" \
            "$(cat "$WORK/g1-$policy.out")" "$(cat "$WORK/g2-$policy.out")"
        expect_eq "two runs differing only in unreferenced operands: detdiff exit ($policy)" 0 $rc
    fi
    $DETDIFF --show "$WORK/g1-$policy" > "$WORK/g1-$policy.show"
    expect_grep "cblas_dsyrk n=2 k=0 beta=1 ($policy): a quick return, nothing digested" \
        ' cblas_dsyrk .*k=0 .*beta=1 .*\| \(no operands\) \|' "$WORK/g1-$policy.show"
    expect_grep "cblas_dsyrk lda < n ($policy): rejected, nothing digested" \
        ' cblas_dsyrk .*lda=1 .*\| \(no operands\) \| blas.rejected=parameter 8 \(lda\)' \
        "$WORK/g1-$policy.show"
    expect_grep "dsymm_ ($policy): only A's upper triangle (3 elements) digested" \
        ' dsymm_ .*ldb=2 .*\| A:in:3x8:' "$WORK/g1-$policy.show"
    expect_grep "dgemm_ alpha=0 ($policy): A and B not digested" \
        ' dgemm_ .*alpha=0 .*\| C:in:4x8:[0-9a-f]+ C:out:' "$WORK/g1-$policy.show"
done
finish
