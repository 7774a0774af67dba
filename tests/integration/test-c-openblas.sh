#!/bin/sh
# A C program on Debian's OpenBLAS: passthrough changes no bit; two traced
# runs diff identical; an input changed before call k diffs at call k as
# "inputs differ".
. "$(dirname "$0")/lib.sh"
# Passthrough: these checks compare against the vendor BLAS's own bits.
export DETSHIM_POLICY=passthrough
P=$PROGS/blas_prog

plain=$($P)
under=$(LD_PRELOAD=$SHIM $P)
traced=$(shim "$WORK/a" $P)
expect_eq "outputs without vs with the shim (no trace)" "$plain" "$under"
expect_eq "outputs without the shim vs traced" "$plain" "$traced"
shim "$WORK/b" $P > /dev/null

$DETDIFF "$WORK/a" "$WORK/b" > "$WORK/same.out"
expect_eq "detdiff exit on two identical runs" 0 $?
expect_grep "identical verdict" '^identical: 1 process(es)?, [0-9]+ records, root [0-9a-f]{64}$' "$WORK/same.out"
# Twelve BLAS calls; the identity stream beside them lists the loaded code.
$DETDIFF --show "$WORK/a" > "$WORK/a.show"
expect_grep "twelve calls recorded" '^  thread 0: 12 records, ' "$WORK/a.show"
expect_grep "the program's OpenBLAS in the identity stream" \
    '^  thread 0 \(identity\): [0-9]+ records, .*' "$WORK/a.show"
expect_grep "the loaded OpenBLAS named with its build-id" \
    ' env\.object name=libopenblas[^ ]* id=build-id:[0-9a-f]+ ' "$WORK/a.show"
root_a=$($DETDIFF --root "$WORK/a")
root_b=$($DETDIFF --root "$WORK/b")
expect_eq "run roots of identical runs" "$root_a" "$root_b"

# Every API of the series is in the trace, both interfaces.
$DETDIFF --show "$WORK/a" > "$WORK/show.out"
for api in cblas_dgemm cblas_sgemm dgemm_ cblas_zgemm cblas_dgemv cblas_ddot cblas_daxpy \
    cblas_dnrm2 cblas_dtrsm cblas_dsyrk zdotc_ cblas_idamax; do
    expect_grep "$api traced" " $api " "$WORK/show.out"
done

for k in 0 5 10; do
    shim "$WORK/p$k" $P perturb $k > /dev/null
    $DETDIFF "$WORK/a" "$WORK/p$k" > "$WORK/p$k.out"
    expect_eq "detdiff exit with input changed before call $k" 1 $?
    expect_grep "call $k classified" "inputs differ" "$WORK/p$k.out"
    expect_grep "call $k located" "record $k \\(seq $k\\)" "$WORK/p$k.out"
done
finish
