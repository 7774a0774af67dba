#!/bin/sh
# scripts/detrun and scripts/detcheck from the build tree: the preload and
# variables are set for the command, --explain shows what the shim parsed,
# and detcheck's verdict and exit status follow detdiff's.
. "$(dirname "$0")/lib.sh"
DETRUN=$TOP/scripts/detrun
DETCHECK=$TOP/scripts/detcheck
P=$PROGS/blas_prog

$DETRUN --explain > "$WORK/explain.out"
expect_eq "detrun --explain: exit" 0 $?
expect_grep "--explain: the default policy's file" "^policy files +.*/policies/default.policy$" "$WORK/explain.out"
expect_grep "--explain: BLAS mode as parsed" "^\\[blas\\] mode +canonical$" "$WORK/explain.out"
$DETRUN -p passthrough --explain > "$WORK/explain2.out"
expect_grep "--explain -p passthrough" "^\\[blas\\] mode +passthrough$" "$WORK/explain2.out"
DETSHIM_SEED=9 $DETRUN --explain > "$WORK/explain3.out"
expect_grep "--explain shows DETSHIM_SEED winning" "^\\[rng\\] seed +9 \\(DETSHIM_SEED\\)$" "$WORK/explain3.out"
$DETRUN -p nosuch --explain > /dev/null 2> "$WORK/bad.err"
expect_eq "--explain with an unknown policy: exit" 2 $?
expect_grep "--explain with an unknown policy: message" "^detshim: DETSHIM_POLICY=nosuch" "$WORK/bad.err"

$DETRUN -t "$WORK/t" -- $P > "$WORK/run.out"
expect_eq "detrun -t: exit" 0 $?
expect_eq "detrun -t: a trace and its attestation were written" "attestation.json main.dtrace" \
    "$(cd "$WORK/t" && echo *)"
# A process of the run that outlives the command (as a pool's workers do)
# and records after it ended: detrun waits for it before it attests.
$DETRUN -t "$WORK/late" -- sh -c "(sleep 1; exec $P > /dev/null) & exit 0" 2> "$WORK/late.err"
expect_eq "detrun -t, a process outliving the command: exit" 0 $?
expect_eq "... its trace is in the run, attested after it ended" "attestation.json main.s1.dtrace" \
    "$(cd "$WORK/late" && echo *)"
expect_grep "... the attestation covers it, complete" '"complete": true' "$WORK/late/attestation.json"
expect_grep "... by name" '"name": "main.s1"' "$WORK/late/attestation.json"
# A command that makes no intercepted call writes no trace file: detrun
# says so instead of leaving an empty directory to be taken for a trace.
$DETRUN -t "$WORK/none" -- true 2> "$WORK/none.err"
expect_eq "detrun -t, a command that records nothing: its exit" 0 $?
expect_eq "... the directory stays empty" "*" "$(cd "$WORK/none" && echo *)"
expect_grep "... and detrun says why there is nothing to diff" \
    "^detrun: true recorded nothing into .*/none, so there is no trace to diff or attest" \
    "$WORK/none.err"
$DETRUN --frobnicate $P > /dev/null 2> "$WORK/opt.err"
expect_eq "detrun with an unknown option: exit" 2 $?

$DETCHECK $P > "$WORK/check.out"
expect_eq "detcheck on a reproducible program: exit" 0 $?
expect_grep "detcheck verdict" "^reproducible: [0-9a-f]{64}$" "$WORK/check.out"
LD_PRELOAD=$FAKES/libfakeblas.so FAKEBLAS_PERTURB=1 $DETCHECK -p passthrough $P > "$WORK/same.out"
expect_eq "detcheck keeps a preload already set (the fake, fixed perturbation): exit" 0 $?
# A run that depends on something the shim does not pin (its pid) differs.
$DETCHECK -p passthrough sh -c 'FAKEBLAS_PERTURB=$(($$ % 250 + 1)) \
    LD_PRELOAD="$LD_PRELOAD '"$FAKES"'/libfakeblas.so" exec '"$P" > "$WORK/diff.out"
expect_eq "detcheck on a run that differs: exit" 1 $?
expect_grep "detcheck names the culprit" "nondeterministic operation" "$WORK/diff.out"
expect_grep "detcheck keeps the traces" "^NOT reproducible: the two runs differ; traces kept in " "$WORK/diff.out"
$DETCHECK -- false > /dev/null 2> "$WORK/false.err"
expect_eq "detcheck on a failing command: exit" 2 $?
expect_grep "detcheck on a failing command: message" "^detcheck: run a of 'false' exited with status 1" "$WORK/false.err"
finish
