#!/bin/sh
# A trace is bounded ([trace] max_bytes, 8 GiB per process file unless the
# policy says otherwise): a program that makes more calls than fit runs to
# its end with its full output, the trace stops at the bound, says so in
# one line and is marked incomplete with the reason, never complete.
. "$(dirname "$0")/lib.sh"
LOOP='import numpy as np
a = np.ones(4)
s = 0.0
for i in range(3000):
    s += float(np.dot(a, a))
print("done", s)'
printf 'include = default\n[trace]\nmax_bytes = 64K\n' > "$WORK/small.policy"
LD_PRELOAD=$SHIM DETSHIM_POLICY=$WORK/small.policy DETSHIM_TRACE=$WORK/t $PY -c "$LOOP" \
    > "$WORK/out" 2> "$WORK/err"
expect_eq "over the bound: the program's exit status" 0 $?
expect_eq "over the bound: the program's whole output" "done 12000.0" "$(cat "$WORK/out")"
expect_grep "over the bound: one line says why" \
    "^detshim: .*max_bytes \(65536 bytes\); later calls are not in it" "$WORK/err"
expect_lines "over the bound: one line only" 1 "$WORK/err"
size=$(wc -c < "$WORK/t/main.dtrace")
if [ "$size" -le 70000 ]; then pass; else fail "the trace file is $size bytes, over the 64 KiB bound"; fi
$DETDIFF --root "$WORK/t" > /dev/null 2> "$WORK/root.err"
expect_ne "over the bound: detdiff --root does not vouch for it" 0 $?
expect_grep "over the bound: detdiff names the reason" "max_bytes" "$WORK/root.err"
# Under detrun, a program that hides its own stderr (pytest captures a
# passing test's) hides the shim's line: the attestation's warning names
# the reason after the run.
QUIET='import os, numpy as np
os.dup2(os.open(os.devnull, os.O_WRONLY), 2)
a = np.ones(4)
for i in range(3000):
    np.dot(a, a)'
"$TOP/scripts/detrun" -p "$WORK/small.policy" -t "$WORK/quiet" -- $PY -c "$QUIET" \
    > /dev/null 2> "$WORK/quiet.err"
expect_eq "over the bound, under detrun: exit status 2 (do not publish)" 2 $?
expect_grep "... the attestation names the process and the reason" \
    "^detverify: warning: the trace of process main in .* is incomplete: .*max_bytes \(65536 bytes\)" \
    "$WORK/quiet.err"
expect_grep "... and detrun says to look there" "incomplete \\(why: the lines above\\)" \
    "$WORK/quiet.err"
printf 'include = default\n[trace]\nmax_bytes = 12Q\n' > "$WORK/bad.policy"
LD_PRELOAD=$SHIM DETSHIM_POLICY=$WORK/bad.policy $PY -c 'pass' 2> "$WORK/bad.err"
expect_eq "a bad max_bytes: exit status" 2 $?
expect_grep "a bad max_bytes: names file:line" "bad.policy:3: bad value '12Q' for \[trace\] max_bytes" \
    "$WORK/bad.err"
finish
