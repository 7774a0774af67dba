#!/bin/sh
# A fake BLAS whose results vary per run (tests/fakes/fakeblas.c) stands in
# for a nondeterministic vendor library: detdiff must name its first call
# as the culprit, "same inputs, different outputs".
. "$(dirname "$0")/lib.sh"
# Passthrough: these checks compare against the vendor BLAS's own bits.
export DETSHIM_POLICY=passthrough
P=$PROGS/blas_prog
FAKE=$FAKES/libfakeblas.so

# The shim first, the fake next: the fake is the "real" cblas_dgemm.
LD_PRELOAD="$SHIM $FAKE" DETSHIM_TRACE=$WORK/a FAKEBLAS_PERTURB=1 $P > "$WORK/a.out"
LD_PRELOAD="$SHIM $FAKE" DETSHIM_TRACE=$WORK/b FAKEBLAS_PERTURB=2 $P > "$WORK/b.out"
expect_ne "the fake's outputs differ between runs" "$(cat "$WORK/a.out")" "$(cat "$WORK/b.out")"

$DETDIFF "$WORK/a" "$WORK/b" > "$WORK/diff.out"
expect_eq "detdiff exit" 1 $?
expect_grep "classified as the culprit" "nondeterministic operation" "$WORK/diff.out"
expect_grep "at the first call" "record 0 \\(seq 0\\), cblas_dgemm" "$WORK/diff.out"
expect_grep "the output operand is named" "C \\(out" "$WORK/diff.out"

$DETDIFF --json "$WORK/a" "$WORK/b" > "$WORK/diff.json"
expect_eq "detdiff --json exit" 1 $?
$PY -c 'import json,sys; json.load(open(sys.argv[1]))' "$WORK/diff.json"
expect_eq "--json output parses as JSON" 0 $?
finish
