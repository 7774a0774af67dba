#!/bin/sh
# The rest of the reference BLAS (rotg, rotmg, rotm, sdsdot, dsdot, cabs1,
# the band, packed, symmetric and Hermitian level-2 routines, hemm, herk,
# her2k): the shim records each call (hemm, herk and her2k on its
# canonical kernels under the default policy, the rest on the vendor), results
# unchanged, and digests only what the specification references, so two
# runs whose unreferenced elements differ diff identical.
. "$(dirname "$0")/lib.sh"
P=$PROGS/blas_more
plain=$($P 1)
expect_eq "the program's own results do not depend on its garbage" "$plain" "$($P 2)"
for policy in passthrough default; do
    for seed in 1 2; do
        out=$(DETSHIM_POLICY=$policy shim "$WORK/$policy-$seed" $P $seed)
        expect_eq "results traced ($policy, seed $seed) as without the shim" "$plain" "$out"
    done
    $DETDIFF "$WORK/$policy-1" "$WORK/$policy-2" > "$WORK/$policy.diff"
    expect_eq "two runs differing only in unreferenced elements: detdiff exit ($policy)" 0 $?
done
$DETDIFF --show "$WORK/passthrough-1" > "$WORK/show.out"
for api in cblas_drotg cblas_zrotg cblas_drotmg cblas_drotm cblas_sdsdot cblas_dsdot dcabs1_ \
    cblas_dgbmv cblas_dsbmv cblas_dtbmv dtbmv_ cblas_dspmv cblas_dspr cblas_dspr2 cblas_dtpmv \
    cblas_dtpsv cblas_dtbsv cblas_dsymv dsymv_ cblas_dsyr cblas_dsyr2 cblas_zhemv zhemv_ \
    cblas_zhbmv cblas_zhpmv cblas_zhpr cblas_zhpr2 cblas_zher cblas_zher2 cblas_zhemm \
    cblas_zherk cblas_zher2k; do
    expect_grep "$api traced" " $api " "$WORK/show.out"
done
expect_grep "rotm with flag -2 reads only the flag" ' cblas_drotm .*\| param:in:1x8:[0-9a-f]+ \|' \
    "$WORK/show.out"
expect_grep "tbmv with a unit diagonal: 3 of the band's 7 elements" \
    ' cblas_dtbmv .*diag=U .*\| A:in:3x8:' "$WORK/show.out"
finish
