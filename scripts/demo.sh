#!/bin/sh
# `make demo`: detshim end to end on a real program. Trains a small seeded
# PyTorch MLP (tests/programs/torch_prog.py) twice under the shim, each run
# tracing every BLAS call to its own fresh folder under build/demo/, then
# diffs the two traces with detdiff and prints the run's root hash, the
# commitment a lab would publish next to its weights. Ends with one verdict
# line. Then run C picks another OpenBLAS kernel and still
# gets the same bits (the default policy runs BLAS canonical), and two runs
# with the BLAS passed through show what detdiff says when runs part.
# Last, detcheck runs an unseeded PyTorch script twice under the pytorch
# policy.
# Exit 0: A, B and C reproduce; 1: they differ; 2: the demo failed.
# DETSHIM_POLICY, if set, is honoured (default: the `default` policy).
set -eu
cd "$(dirname "$0")/.."
SHIM=build/libdetshim.so
DETDIFF=build/detdiff
PY=/usr/bin/python3
PROG=tests/programs/torch_prog.py
TRAIN=tests/programs/torch_train.py
STEPS=30
HIDDEN=256
OUT=build/demo
RUN_A=$OUT/run-a
RUN_B=$OUT/run-b
RUN_C=$OUT/run-c
RUN_D=$OUT/run-d
RUN_E=$OUT/run-e

say() {
    echo "demo: $*"
}
# trouble MSG: the demo itself could not do its job.
trouble() {
    echo "demo: FAILED: $*" >&2
    exit 2
}
indent() {
    sed 's/^/        /'
}

for f in "$SHIM" "$DETDIFF" "$PROG"; do
    [ -f "$f" ] || trouble "missing $f (run 'make demo', which builds it)"
done
unset LD_PRELOAD DETSHIM_TRACE

# traced_run STEP LABEL DIR: trains once under the shim, tracing to DIR;
# prints what it did and sets $weights to the SHA-256 of the final weights.
traced_run() {
    say "$1 $2: ${EXTRA_ENV:+$EXTRA_ENV }LD_PRELOAD=$SHIM DETSHIM_TRACE=$3 python3 $PROG $STEPS $HIDDEN"
    shift
    t0=$(date +%s%N)
    status=0
    # shellcheck disable=SC2086 # EXTRA_ENV is a list of VAR=value words
    weights=$(env $EXTRA_ENV LD_PRELOAD="$SHIM" DETSHIM_TRACE="$2" "$PY" "$PROG" "$STEPS" "$HIDDEN") ||
        status=$?
    t1=$(date +%s%N)
    [ "$status" -eq 0 ] || trouble "$1: the training exited with status $status (its errors are above)"
    echo "$weights" | grep -Eqx '[0-9a-f]{64}' ||
        trouble "$1: expected a SHA-256 of the weights on stdout, got '$weights'"
    calls=$("$DETDIFF" --show "$2" |
        awk '$1 == "thread" && $4 == "records," { n += $3 } END { print n + 0 }') ||
        trouble "$1: detdiff --show cannot read the trace in $2"
    [ "$calls" -gt 0 ] || trouble "$1: the trace in $2 holds no records: nothing was intercepted"
    say "    weights sha256 $weights"
    say "    $calls BLAS calls traced, $(du -sh "$2" | cut -f1) of trace," \
        "$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", (b - a) / 1e9 }') s"
}

say "the same seeded PyTorch training ($STEPS SGD steps, hidden width $HIDDEN), run under"
say "detshim with every BLAS call traced: twice, then with another BLAS kernel, then twice"
say "with the BLAS passed through; detdiff compares the traces. Then an unseeded script, twice."
say "policy: ${DETSHIM_POLICY:-default}"
rm -rf "$RUN_A" "$RUN_B" "$RUN_C" "$RUN_D" "$RUN_E"
mkdir -p "$OUT"
EXTRA_ENV=""

traced_run "[1/8]" "run A" "$RUN_A"
weights_a=$weights
traced_run "[2/8]" "run B" "$RUN_B"
weights_b=$weights

say "[3/8] a record from run A's trace (detdiff --show $RUN_A): its number, the call"
say "      and its parameters | each operand as name:in/out:elements x bytes:digest |"
say "      how the shim ran it | the call site (module+offset, symbol)"
"$DETDIFF" --show "$RUN_A" > "$OUT/run-a.txt" || trouble "detdiff --show $RUN_A failed"
record=$(grep -E '^ +[0-9]+ sgemm_ ' "$OUT/run-a.txt" | head -n 1)
[ -n "$record" ] || record=$(grep -E '^ +[0-9]+ ' "$OUT/run-a.txt" | head -n 1)
echo "$record" | sed 's/^ *//' | indent
say "      (the whole trace, readably: $OUT/run-a.txt)"

say "[4/8] detdiff $RUN_A $RUN_B"
status=0
"$DETDIFF" "$RUN_A" "$RUN_B" > "$OUT/detdiff.txt" 2>&1 || status=$?
indent < "$OUT/detdiff.txt"
case $status in
0) ;;
1)
    say "NOT reproducible: the traces diverge (detdiff's explanation above);" \
        "weights A $weights_a, B $weights_b"
    exit 1
    ;;
*) trouble "detdiff could not compare the traces (exit status $status)" ;;
esac
if [ "$weights_a" != "$weights_b" ]; then
    say "NOT reproducible: identical BLAS traces but different weights" \
        "(A $weights_a, B $weights_b): the difference comes from outside BLAS"
    exit 1
fi
root_a=$("$DETDIFF" --root "$RUN_A") || trouble "detdiff --root $RUN_A failed"
root_b=$("$DETDIFF" --root "$RUN_B") || trouble "detdiff --root $RUN_B failed"
[ "$root_a" = "$root_b" ] ||
    trouble "detdiff calls the traces identical but their roots differ ($root_a vs $root_b)"
say "run root (detdiff --root $RUN_A), the same for both runs:"
echo "$root_a" | indent

say "[5/8] run C: another OpenBLAS kernel, same default policy. Canonical BLAS has one"
say "      evaluation order whatever kernel the vendor would pick for this CPU:"
EXTRA_ENV="OPENBLAS_CORETYPE=Prescott"
traced_run "     " "run C" "$RUN_C"
weights_c=$weights
status=0
"$DETDIFF" "$RUN_A" "$RUN_C" > "$OUT/detdiff-c.txt" 2>&1 || status=$?
indent < "$OUT/detdiff-c.txt"
if [ "$status" -ne 0 ] || [ "$weights_c" != "$weights_a" ]; then
    say "NOT reproducible across BLAS kernels: weights A $weights_a, C $weights_c"
    exit 1
fi

say "[6/8] what that removes: runs D and E pass the BLAS through (DETSHIM_POLICY=passthrough)"
say "      with the two kernels; detdiff names the first call whose bits differ:"
EXTRA_ENV="DETSHIM_POLICY=passthrough OPENBLAS_CORETYPE=Haswell"
traced_run "     " "run D" "$RUN_D"
EXTRA_ENV="DETSHIM_POLICY=passthrough OPENBLAS_CORETYPE=Prescott"
traced_run "     " "run E" "$RUN_E"
status=0
"$DETDIFF" "$RUN_D" "$RUN_E" > "$OUT/detdiff-de.txt" 2>&1 || status=$?
head -n 12 "$OUT/detdiff-de.txt" | indent
case $status in
0) say "      (D and E matched: this CPU gave both kernels the same bits)" ;;
1) say "      (the whole report: $OUT/detdiff-de.txt)" ;;
*) trouble "detdiff could not compare runs D and E (exit status $status)" ;;
esac
say "[7/8] an unmodified, unseeded PyTorch script (DataLoader with shuffle and two workers,"
say "      dropout, Adam: $TRAIN). Plain, it differs every run:"
for run in 1 2; do
    "$PY" "$TRAIN" | indent || trouble "$TRAIN failed without the shim (its errors are above)"
done
say "      under the pytorch policy (detcheck runs it twice, traced, and diffs):"
say "      scripts/detcheck -p pytorch -k -- python3 $TRAIN"
status=0
scripts/detcheck -p pytorch -k -- "$PY" "$TRAIN" > "$OUT/detcheck.txt" 2>&1 || status=$?
grep -v "^traces kept in " "$OUT/detcheck.txt" | indent
kept=$(sed -n 's/^traces kept in //p' "$OUT/detcheck.txt")
case $status in
0)
    say "      what the two runs printed:"
    cat "$kept/a.out" "$kept/b.out" | indent
    rm -rf "$kept" ;;
1) say "NOT reproducible under the pytorch policy"; exit 1 ;;
*) trouble "detcheck could not run $TRAIN (exit status $status)" ;;
esac
say "[8/8] verifying a release: a lab publishes its trace and weights (pub/trace,"
say "      pub/weights.pt); a third party re-runs the published command with detverify:"
LAB=$OUT/lab
rm -rf "$LAB" "$OUT/verifier"
mkdir -p "$LAB/data"
printf '1,2,3\n4,5,6\n' > "$LAB/data/train.csv"
ART=$(pwd)/tests/programs/artifacts_py.py
VERIFY=$(pwd)/build/detverify
DETRUN=$(pwd)/scripts/detrun
(cd "$LAB" && "$DETRUN" -p pytorch -t pub/trace -- "$PY" "$ART" && cp weights.pt pub/) ||
    trouble "the lab's published run failed"
cp -r "$LAB" "$OUT/verifier"
say "      detverify pub/trace -- python3 tests/programs/artifacts_py.py"
(cd "$OUT/verifier" && "$VERIFY" pub/trace -- "$PY" "$ART" 2> /dev/null | tail -1 | indent) ||
    trouble "detverify did not verify the honest release"
say "      the lab post-trains and publishes those weights beside the same trace:"
(cd "$LAB" && "$PY" "$ART" poison && cp weights.pt "../verifier/pub/weights.pt") ||
    trouble "the lab's post-training failed"
status=0
(cd "$OUT/verifier" && "$VERIFY" pub/trace -- "$PY" "$ART" > ../verify-poisoned.txt 2> /dev/null) ||
    status=$?
[ $status = 1 ] || trouble "detverify did not reject the post-trained release (exit status $status)"
grep -E "^not verified|published trace matches" "$OUT/verify-poisoned.txt" | indent
rm -rf "${TMPDIR:-/tmp}"/detverify.*
say "reproducible: weights $weights_a, trace root $root_a"
