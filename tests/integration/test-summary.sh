#!/bin/sh
# Summary traces ([trace] level = summary, docs/tracing.md#long-runs-summary-traces):
# a summary and a full trace of one run have the same root; two runs that
# differ name the first differing window; detcheck --bisect names the call
# a full trace names, and says plainly when re-runs do not diverge inside
# the window; [trace] max_bytes still bounds a summary; bad settings stop
# the program with one line.
. "$(dirname "$0")/lib.sh"
P=$PROGS/window_prog
CALLS=20000
K=12345 # the call that differs: window 3 (records 12288..16383) of 4096
export DETSHIM_POLICY=passthrough
# detcheck keeps the traces of runs that differ under TMPDIR: in $WORK.
export TMPDIR=$WORK
# run LEVEL DIR DELTA: one traced run of window_prog at LEVEL.
run() {
    DETSHIM_TRACE_LEVEL=$1 shim "$WORK/$2" "$P" $CALLS $K "$3" > "$WORK/$2.out"
    expect_eq "$2: exit status" 0 $?
}
root() { $DETDIFF --root "$WORK/$1"; }

# ---- one run, both levels: one root ---------------------------------------
run full full 0
run summary summary 0
expect_eq "full and summary of one run: the same root" "$(root full)" "$(root summary)"
$DETDIFF "$WORK/full" "$WORK/summary" > "$WORK/same.txt"
expect_eq "full vs summary of one run: detdiff exit" 0 $?
expect_grep "full vs summary: identical, every call counted (and the identity records)" \
    "^identical: 1 process, 200[0-9][0-9] records" \
    "$WORK/same.txt"
size=$(wc -c < "$WORK/summary/main.dtrace")
full=$(wc -c < "$WORK/full/main.dtrace")
# Bytes per call, the header and the identity stream included (a size, not a time).
if [ $((size * 1000 / CALLS)) -lt 2000 ]; then pass; else
    fail "summary trace is $size bytes for $CALLS calls: 2 bytes per call or more"; fi
if [ "$size" -lt $((full / 100)) ]; then pass; else
    fail "summary trace ($size bytes) is not under 1/100 of the full one ($full bytes)"; fi
$DETDIFF --show "$WORK/summary" > "$WORK/show.txt"
expect_grep "--show says what a summary stream holds" \
    "summary: $CALLS calls in 5 windows of 4096, 5 held as digests only" "$WORK/show.txt"
expect_grep "the header names the level (informational)" "level = summary \(informational\)" \
    "$WORK/show.txt"
# The policy's key does the same as the variable.
printf 'include = passthrough\n[trace]\nlevel = summary\n' > "$WORK/sum.policy"
DETSHIM_POLICY=$WORK/sum.policy shim "$WORK/bypolicy" "$P" $CALLS $K 0 > /dev/null
$DETDIFF --show "$WORK/bypolicy" > "$WORK/show2.txt"
expect_grep "[trace] level = summary in a policy" "5 held as digests only" "$WORK/show2.txt"
# One window written in full (as a bisect re-run does) keeps the root.
DETSHIM_TRACE_FULL_WINDOW=0:3 shim "$WORK/onefull" "$P" $CALLS $K 0 > /dev/null
expect_eq "a summary with window 0:3 in full: the same root" "$(root full)" "$(root onefull)"
$DETDIFF --show "$WORK/onefull" > "$WORK/show3.txt"
expect_grep "window 0:3 in full: its records are in the file" \
    "^  thread 0: 4096 records.*" "$WORK/show3.txt"

# Threads, forks and exec (procs_prog), windows of 3 records: each stream is
# summarized on its own; a summary has the full trace's root, and threads
# started in another order still diff identical.
printf 'include = passthrough\n[trace]\nwindow = 3\n' > "$WORK/w3.policy"
for mode in "threads 0 1 2 3" "threads 3 1 0 2" fork exec; do
    name=$(echo "$mode" | tr -d ' ') # not $dir: shim() sets that
    for level in full summary; do
        DETSHIM_POLICY=$WORK/w3.policy DETSHIM_TRACE_LEVEL=$level shim "$WORK/$name-$level" \
            $PROGS/procs_prog $mode > /dev/null
    done
    expect_eq "procs_prog $mode: summary and full have one root" "$(root "$name-full")" \
        "$(root "$name-summary")"
done
$DETDIFF "$WORK/threads0123-summary" "$WORK/threads3102-summary" > "$WORK/threads.diff" 2>&1
expect_eq "summaries of threads started in another order: detdiff exit" 0 $?
$DETDIFF "$WORK/threads0123-full" "$WORK/threads3102-summary" > "$WORK/threads2.diff" 2>&1
expect_eq "a full and a summary trace of threads in another order: detdiff exit" 0 $?

# ---- two runs that differ at call K ---------------------------------------
run full fulla clock
run full fullb clock
run summary suma clock
run summary sumb clock
$DETDIFF "$WORK/fulla" "$WORK/fullb" > "$WORK/full.diff"
expect_eq "two full traces: detdiff exit" 1 $?
expect_grep "two full traces name the call" "where: thread 0, record $K \(seq $K\), cblas_ddot" \
    "$WORK/full.diff"
$DETDIFF "$WORK/suma" "$WORK/sumb" > "$WORK/sum.diff"
expect_eq "two summary traces: detdiff exit" 1 $?
expect_grep "two summaries name the first differing window" \
    "window differs: thread 0 window 3 \(records 12288\.\.16383\)" "$WORK/sum.diff"
expect_grep "... and how to name its call" "DETSHIM_TRACE_FULL_WINDOW=0:3\)" "$WORK/sum.diff"
$DETDIFF "$WORK/fulla" "$WORK/sumb" > "$WORK/mixed.diff"
expect_grep "a full and a summary trace: the window too" "window 3 \(records 12288\.\.16383\)" \
    "$WORK/mixed.diff"

# ---- detcheck --bisect ----------------------------------------------------
DETCHECK=$TOP/scripts/detcheck
$DETCHECK -p passthrough --bisect "$WORK/suma" -- "$P" $CALLS $K clock > "$WORK/bisect.out" 2>&1
expect_eq "bisect of a run that differs each time: exit" 1 $?
expect_grep "bisect: the window first" "^bisect: .* first differ in window 0:3 \(records 12288\.\.16383\)" \
    "$WORK/bisect.out"
expect_grep "bisect names the call the full traces name" \
    "where: thread 0, record $K \(seq $K\), cblas_ddot" "$WORK/bisect.out"
expect_grep "... by re-execution" "^NOT reproducible: two re-runs with full records in window 0:3 name the call" \
    "$WORK/bisect.out"
# A published trace made with another input: re-runs agree with each other.
run summary other 5
$DETCHECK -p passthrough --bisect "$WORK/other" -- "$P" $CALLS $K 0 > "$WORK/plain.out" 2>&1
expect_eq "bisect where re-runs do not diverge: exit" 1 $?
expect_grep "... says so plainly" \
    "^not named: two re-runs with full records in window 0:3 agree there, so re-execution does not diverge inside the window" \
    "$WORK/plain.out"
$DETCHECK -p passthrough --bisect "$WORK/summary" -- "$P" $CALLS $K 0 > "$WORK/agree.out" 2>&1
expect_eq "bisect of a run that agrees: exit" 0 $?
expect_grep "... says there is no divergence" "^no divergence: a re-run agrees with" "$WORK/agree.out"
$DETCHECK --bisect "$WORK/no-such" -- true > /dev/null 2> "$WORK/nosuch.err"
expect_eq "bisect of a trace that cannot be read: exit" 2 $?

# ---- detverify against a published summary --------------------------------
DETSHIM_TRACE_LEVEL=summary "$TOP/scripts/detrun" -p passthrough -t "$WORK/pub" -- \
    "$P" $CALLS $K 5 > /dev/null
"$TOP/build/detverify" "$WORK/pub" -- "$P" $CALLS $K 5 > "$WORK/verified.out" 2>&1
expect_eq "detverify of a summary, same run: exit" 0 $?
expect_grep "detverify says a summary matched window by window, not call by call" \
    "matches the re-run window by window \(a summary trace\)" "$WORK/verified.out"
"$TOP/build/detverify" "$WORK/pub" -- "$P" $CALLS $K 0 > "$WORK/notver.out" 2>&1
expect_eq "detverify of a summary, another input: exit" 1 $?
expect_grep "detverify's verdict names the window" \
    "^not verified: .*thread 0, window 3 \(records 12288\.\.16383\): the window digests differ" \
    "$WORK/notver.out"

# ---- bounds and bad settings ----------------------------------------------
# window = 1: a WINDOW frame per call, past a 64 KiB bound.
printf 'include = passthrough\n[trace]\nlevel = summary\nwindow = 1\nmax_bytes = 64K\n' \
    > "$WORK/bound.policy"
DETSHIM_POLICY=$WORK/bound.policy shim "$WORK/bound" "$P" $CALLS $K 0 > "$WORK/bound.out" \
    2> "$WORK/bound.err"
expect_eq "summary over max_bytes: the program's exit status" 0 $?
expect_eq "summary over max_bytes: the program's output" "$(cat "$WORK/full.out")" \
    "$(cat "$WORK/bound.out")"
expect_grep "summary over max_bytes: one line says why" "max_bytes \(65536 bytes\)" "$WORK/bound.err"
size=$(wc -c < "$WORK/bound/main.dtrace")
if [ "$size" -le 70000 ]; then pass; else fail "bounded summary trace is $size bytes"; fi
$DETDIFF --root "$WORK/bound" > /dev/null 2>&1
expect_ne "summary over max_bytes: detdiff --root does not vouch for it" 0 $?
DETSHIM_TRACE_FULL_WINDOW=x3 shim "$WORK/bad" "$P" 10 1 0 > /dev/null 2> "$WORK/bad.err"
expect_eq "a bad DETSHIM_TRACE_FULL_WINDOW: exit" 2 $?
expect_grep "... one line naming it" "^detshim: .*DETSHIM_TRACE_FULL_WINDOW=x3 is not a window" \
    "$WORK/bad.err"
DETSHIM_TRACE_LEVEL=steps shim "$WORK/bad2" "$P" 10 1 0 > /dev/null 2> "$WORK/bad2.err"
expect_eq "a bad DETSHIM_TRACE_LEVEL: exit" 2 $?
expect_grep "... one line naming it" "DETSHIM_TRACE_LEVEL=steps: expected full or summary" \
    "$WORK/bad2.err"
rm -rf "$WORK"/*/
finish
