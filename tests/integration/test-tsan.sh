#!/bin/sh
# The trace writer's own code under ThreadSanitizer (tests/unit/tsan_trace.c):
# threads racing to open and publish the file, flushing, exiting, and the
# exit flush among threads still recording. Any data race fails the run;
# the traces must say what happened (whole, or incomplete and why).
. "$(dirname "$0")/lib.sh"
BIN=$TOP/build/tests/tsan_trace

if ! env -u MAKEFLAGS -u MAKELEVEL make -s -C "$TOP" build/tests/tsan_trace > "$WORK/build.log" 2>&1; then
    if grep -qiE 'fsanitize=thread|tsan|unsupported' "$WORK/build.log"; then
        skip "no compiler here links -fsanitize=thread: $(grep -m1 -iE 'tsan|sanitize|unsupported' "$WORK/build.log")"
    fi
    fail "cannot build the TSan stress test:"
    sed 's/^/    /' "$WORK/build.log" | tail -20 >&2
    finish
fi
export DETSHIM_POLICY=$TOP/policies/passthrough.policy
export TSAN_OPTIONS="halt_on_error=1 exitcode=66 report_signal_unsafe=0"

# run MODE N: runs the stress test, expecting no report.
run() {
    timeout -s KILL 120 "$BIN" "$1" "$WORK/$1$2" > "$WORK/$1$2.out" 2> "$WORK/$1$2.err"
    expect_eq "$1 run $2: exit status (66: ThreadSanitizer found a race)" 0 $?
    expect_no_grep "$1 run $2: no ThreadSanitizer report" 'ThreadSanitizer' "$WORK/$1$2.err"
    $DETDIFF --root --json "$WORK/$1$2" > "$WORK/$1$2.json" 2> /dev/null
}

run clean 1
expect_grep "threads racing to open the file: every record, a whole trace" \
    '"records":24000,"complete":true' "$WORK/clean1.json"
# The same with the records compressed (each thread its own zstd context).
DETSHIM_TRACE_COMPRESS=zstd run clean z
expect_grep "compressed: every record, a whole trace" '"records":24000,"complete":true' \
    "$WORK/cleanz.json"
for n in 1 2 3; do
    run late $n
    expect_grep "exit flush among recording threads (run $n): the trace says incomplete" \
        '"complete":false' "$WORK/late$n.json"
    expect_grep "exit flush among recording threads (run $n): one line says why" \
        'is incomplete: a thread still made calls after the trace closed at exit' "$WORK/late$n.err"
done
finish
