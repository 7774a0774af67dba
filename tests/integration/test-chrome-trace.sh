#!/bin/sh
# detdiff --chrome-trace: the file is a valid Trace Event file
# (chrome_check.py, written from the format's specification), both runs of
# every process are in it, the first divergence is marked on both sides at
# the same record, a long stream keeps its head and says what it left out,
# and a path that cannot be written is one line and exit 2, never half a
# file.
. "$(dirname "$0")/lib.sh"
CHECK="$PY $TOP/tests/integration/chrome_check.py"
TR=$WORK/tr
$PY "$TOP/tests/integration/mktrace.py" "$TR" 0 || { fail "mktrace.py could not write the traces"; finish; }

# chrome NAME ARGS...: detdiff with --chrome-trace WORK/NAME.json; the
# checker's facts in WORK/NAME.facts, detdiff's status in $rc.
chrome() {
    name=$1
    shift
    "$DETDIFF" --chrome-trace "$WORK/$name.json" "$@" > "$WORK/$name.out" 2> "$WORK/$name.err"
    rc=$?
    if $CHECK "$WORK/$name.json" > "$WORK/$name.facts" 2> "$WORK/$name.check"; then pass; else
        fail "$name: not a valid Trace Event file: $(cat "$WORK/$name.check")"
    fi
}

chrome nondet "$TR/nondet/a" "$TR/nondet/b"
expect_eq "nondet: detdiff's status is still the verdict" 1 "$rc"
expect_grep "nondet: the text verdict is still printed" "nondeterministic operation" "$WORK/nondet.out"
expect_grep "nondet: both runs' processes are in the file" \
    "^processes A: main A: main.f1 B: main B: main.f1$" "$WORK/nondet.facts"
expect_grep "nondet: run A's first divergence marked at record 2" \
    "^mark A: main 0 2 first divergence: nondeterministic$" "$WORK/nondet.facts"
expect_grep "nondet: run B's first divergence marked at record 2" \
    "^mark B: main 0 2 first divergence: nondeterministic$" "$WORK/nondet.facts"
expect_eq "nondet: the differing records are coloured, once per side" 2 \
    "$(grep -o '"cname":"terrible"' "$WORK/nondet.json" | wc -l | tr -d ' ')"

chrome identical "$TR/identical/a" "$TR/identical/b"
expect_eq "identical: status 0" 0 "$rc"
expect_no_grep "identical: nothing marked" "^mark" "$WORK/identical.facts"

chrome missing "$TR/missing_process/a" "$TR/missing_process/b"
expect_grep "missing process: marked on the side that has it" \
    "^mark A: main.f1 0 0 missing process$" "$WORK/missing.facts"

chrome json --json "$TR/extra/a" "$TR/extra/b"
expect_eq "--json with --chrome-trace: one JSON object on stdout" 1 \
    "$($PY -c 'import json,sys; json.load(open(sys.argv[1])); print(1)' "$WORK/json.out" 2>&1)"
expect_grep "extra calls: marked where the shorter stream ends" \
    "^mark B: main 0 6 first divergence: extra_calls$" "$WORK/json.facts"

# A real run under the shim, long enough that the head limit applies: one
# stream of 60,000 ddot calls keeps 50,000 and says 10,000 are left out.
for r in a b; do
    shim "$WORK/long-$r" "$PROGS/exit_prog" sigterm 60000 > /dev/null 2>&1
done
chrome long "$WORK/long-a" "$WORK/long-b"
expect_eq "long run: identical" 0 "$rc"
expect_grep "long run: one gap event per side for the records left out" "^gaps 2$" "$WORK/long.facts"
expect_grep "long run: the gap says how many" '"name":"10[0-9][0-9][0-9] records left out"' \
    "$WORK/long.json"
rm -rf "$WORK/long-a" "$WORK/long-b" "$WORK/long.json"

# Wrong use: one line on stderr, exit 2, and nothing left behind.
"$DETDIFF" --chrome-trace "$WORK/nodir/x.json" "$TR/nondet/a" "$TR/nondet/b" > /dev/null 2> "$WORK/e1"
expect_eq "unwritable path: exit 2" 2 "$?"
expect_lines "unwritable path: one line" 1 "$WORK/e1"
expect_grep "unwritable path: named, with what to do" "nodir/x.json.*writable directory" "$WORK/e1"
mkdir -p "$WORK/isdir"
"$DETDIFF" --chrome-trace "$WORK/isdir" "$TR/nondet/a" "$TR/nondet/b" > /dev/null 2> "$WORK/e2"
expect_eq "a directory as OUT: exit 2" 2 "$?"
expect_eq "a directory as OUT: no temporary file left" "" "$(ls "$WORK" | grep '\.tmp$')"
"$DETDIFF" --root "$TR/nondet/a" --chrome-trace "$WORK/r.json" > /dev/null 2> "$WORK/e3"
expect_eq "--chrome-trace with --root: exit 2" 2 "$?"
expect_grep "--chrome-trace with --root: says it needs two runs" "two runs only" "$WORK/e3"
"$DETDIFF" "$TR/nondet/a" "$TR/nondet/b" --chrome-trace > /dev/null 2> "$WORK/e4"
expect_eq "--chrome-trace without a path: exit 2" 2 "$?"
expect_grep "--chrome-trace without a path: says what to give" "needs the path" "$WORK/e4"
finish
