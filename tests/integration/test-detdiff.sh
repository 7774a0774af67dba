#!/bin/sh
# detdiff against traces crafted from the format spec by mktrace.py (an
# independent writer): each kind of divergence, identical runs whose threads
# start and interleave differently, cut-short, damaged and hostile files,
# option and usage errors. Checks exit statuses and the key lines of the
# output, and that nothing ever crashes.
#
#   tests/integration/test-detdiff.sh          from the repository root, after make
#   DETDIFF_WRAP="valgrind -q --error-exitcode=99 --leak-check=full \
#       --errors-for-leak-kinds=definite" tests/integration/test-detdiff.sh
#                                              the same under valgrind
set -u

DETDIFF=${DETDIFF:-build/detdiff}
PYTHON=${PYTHON:-python3}
WRAP=${DETDIFF_WRAP:-}
FUZZ=${DETDIFF_FUZZ:-40}
HERE=$(dirname "$0")

if [ ! -x "$DETDIFF" ]; then
    echo "test-detdiff: $DETDIFF is missing; run make first" >&2
    exit 2
fi
T=$(mktemp -d "${TMPDIR:-/tmp}/test-detdiff.XXXXXX") || exit 2
trap 'rm -rf "$T"' EXIT
if ! "$PYTHON" "$HERE/mktrace.py" "$T/tr" "$FUZZ"; then
    echo "test-detdiff: mktrace.py could not write the test traces" >&2
    exit 2
fi
TR=$T/tr

checks=0
failed=0
what=""

# run_dd ARGS...: runs detdiff; stdout in $T/out, stderr in $T/err, status in $rc.
run_dd() {
    what="detdiff $*"
    json=0
    case " $* " in *" --json "*) json=1 ;; esac
    # shellcheck disable=SC2086
    $WRAP "$DETDIFF" "$@" >"$T/out" 2>"$T/err"
    rc=$?
}

fail() {
    failed=$((failed + 1))
    echo "FAIL: $what: $1" >&2
    sed -e 's/^/  stdout: /' "$T/out" | head -n 40 >&2
    sed -e 's/^/  stderr: /' "$T/err" | head -n 10 >&2
}

expect_rc() {
    checks=$((checks + 1))
    [ "$rc" = "$1" ] || fail "exit status $rc, expected $1"
}

# expect_out TEXT: a line of stdout contains TEXT (fixed string).
expect_out() {
    checks=$((checks + 1))
    grep -qF -- "$1" "$T/out" || fail "stdout lacks: $1"
}

expect_no_out() {
    checks=$((checks + 1))
    ! grep -qF -- "$1" "$T/out" || fail "stdout should not contain: $1"
}

# expect_error TEXT: stderr is exactly one line, starting "detdiff: " and
# containing TEXT; stdout is empty, or with --json the same error as JSON.
expect_error() {
    checks=$((checks + 1))
    if [ "$(wc -l <"$T/err")" -ne 1 ] || ! grep -q '^detdiff: ' "$T/err" ||
        ! grep -qF -- "$1" "$T/err"; then
        fail "expected one error line with: $1"
    elif [ "$json" = 0 ] && [ -s "$T/out" ]; then
        fail "an error should print nothing on stdout"
    elif [ "$json" = 1 ]; then
        expect_json "d['result'] == 'error' and d['error'] in open('$T/err').read()"
    fi
}

# expect_json PYTHON-EXPR: stdout is one JSON object d for which EXPR holds.
expect_json() {
    checks=$((checks + 1))
    "$PYTHON" -c '
import json, sys
d = json.load(open(sys.argv[1], encoding="utf-8"))
sys.exit(0 if eval(sys.argv[2]) else 1)' "$T/out" "$1" 2>>"$T/err" ||
        fail "JSON check failed: $1"
}

pair() { run_dd "$@" "$TR/$case/a" "$TR/$case/b"; }

# ---- identical runs --------------------------------------------------------
case=identical
pair
expect_rc 0
expect_out "identical: 2 processes, 14 records, root $(cat "$TR/$case/root_a")"
pair --json
expect_rc 0
expect_json "d['result'] == 'identical' and d['processes'] == 2 and d['records'] == 14 and d['divergences'] == [] and d['root'] == open('$TR/$case/root_a').read().strip()"
run_dd --root "$TR/$case/b"
expect_rc 0
expect_out "$(cat "$TR/$case/root_b")"
checks=$((checks + 1))
[ "$(cat "$TR/$case/root_a")" = "$(cat "$TR/$case/root_b")" ] ||
    fail "mktrace.py gave the two identical runs different roots"
run_dd --root "$TR/$case/a/main.dtrace"
expect_rc 0
run_dd "$TR/$case/a/main.dtrace" "$TR/$case/b/main.dtrace"
expect_rc 0
expect_out "identical: 1 process, 12 records"
case=unknown_frame
pair
expect_rc 0
expect_out "identical: 2 processes"

# ---- summary traces (windows of 2 records) ---------------------------------
case=summary_same
pair
expect_rc 0
expect_out "identical: 2 processes, 14 records, root $(cat "$TR/$case/root_a")"
checks=$((checks + 1))
[ "$(cat "$TR/$case/root_a")" = "$(cat "$TR/$case/root_b")" ] ||
    fail "mktrace.py gave a full and a summary trace of one run different roots"
for case in summary_window summary_full; do
    pair
    expect_rc 1
    expect_out "window differs: thread 0 window 1 (records 2..3): the window digests differ, every earlier window matches"
    expect_out "DETSHIM_TRACE_FULL_WINDOW=0:1)"
    pair --json
    expect_rc 1
    expect_json "d['divergences'][0]['kind'] == 'window' and d['divergences'][0]['window'] == 1 and d['divergences'][0]['index'] == 2 and d['divergences'][0]['extra'] == 2"
done
case=summary_longer
pair
expect_rc 1
expect_out "window differs: thread 0 window 3 (records 6..6) is in run B only; run A's stream ends before it"

# ---- record divergences ----------------------------------------------------
case=nondet
pair
expect_rc 1
expect_out "process main: diverged"
expect_out "nondeterministic operation"
expect_out "where: thread 0, record 2 (seq 2), dgemm_"
expect_out "shapes: transa=N transb=N m=4 n=4 k=4 alpha=1"
expect_out "c (out, 16 x 8 bytes): run A "
expect_out "#0 libtrain.so+0x1b80 forward"
expect_out "#1 libtrain.so+0x1a40 train_step"
expect_out "#2 train+0x2210 main"
expect_out "diverged: 1 of 2 processes differs, 1 difference"
expect_no_out "main.f1"
pair --json
expect_rc 1
expect_json "d['result'] == 'diverged' and len(d['divergences']) == 1"
expect_json "(lambda x: x['kind'] == 'nondeterministic' and x['process'] == 'main' and x['thread_a'] == 0 and x['index'] == 2 and x['record_a']['api'] == 'dgemm_' and x['record_a']['params']['m'] == 4 and x['record_a']['site'][0]['symbol'] == 'forward' and x['record_a']['operands'][2]['digest'] != x['record_b']['operands'][2]['digest'])(d['divergences'][0])"

# ---- step records (framework.step): the first line names the step ---------
case=steps
pair
expect_rc 1
expect_out "first differing step: 2, parameter layer3.weight"
expect_out "inputs differ: divergence entered earlier, outside intercepted calls"
pair --json
expect_json "d['first_step']['step'] == 2 and d['first_step']['parameter'] == 'layer3.weight' and d['first_step']['framework'] == 'torch' and d['first_step']['kind'] == 'nondeterministic' and d['first_op'] is None"
case=steps_nameless
pair
expect_rc 1
expect_out "first differing step: step record 1 of the thread (no step number), parameter w"
case=steps_extra
pair
expect_rc 1
expect_out "first differing step: 4, made by run B only"
pair --json
expect_json "d['first_step']['only_in'] == 'b' and d['first_step']['parameter'] is None"
case=nondet
pair --json
expect_json "d['first_step'] is None and d['first_op'] is None"

case=inputs
pair
expect_rc 1
expect_out "inputs differ: divergence entered earlier, outside intercepted calls"
expect_out "where: thread 0, record 3 (seq 3), dgemm_"
expect_out "a (in, 16 x 8 bytes)"
expect_out "last matching record: seq 2 dgemm_"
pair --json
expect_json "d['divergences'][0]['kind'] == 'inputs_differ' and d['divergences'][0]['last_match']['seq'] == 2"

case=inputs_first
pair
expect_rc 1
expect_out "inputs differ"
expect_out "last matching record: none"
pair --json
expect_json "d['divergences'][0]['last_match'] is None"

case=control_params
pair
expect_rc 1
expect_out "control flow diverged"
expect_out "shapes in run A: transa=N transb=N m=4"
expect_out "shapes in run B: transa=N transb=N m=8"

case=control_api
pair
expect_rc 1
expect_out "control flow diverged"
expect_out "dgemm_ in run A, ddot_ in run B"

case=decision
pair
expect_rc 1
expect_out "decision differs"
expect_out "notes in run A: blas.mode=passthrough"
expect_out "notes in run B: blas.mode=canonical"

case=site
pair
expect_rc 1
expect_out "control flow diverged"
expect_out "call site in run B:"
expect_out "#0 libtrain.so+0x1c00"

case=worker
pair
expect_rc 1
expect_out "where: thread 2 in run A, thread 1 in run B, record 1 (seq 1), saxpy_"
expect_out "diverged: 1 of 2 processes differs, 1 difference"

case=two
pair
expect_rc 1
expect_out "record 1 (seq 1)"
expect_no_out "record 3 (seq 3)"
pair --all
expect_rc 1
expect_out "record 1 (seq 1)"
expect_out "record 3 (seq 3)"
expect_out "2 differences"
pair --all --json
expect_json "[x['index'] for x in d['divergences']] == [1, 3]"

# ---- streams that end early, processes, headers ----------------------------
case=extra
pair
expect_rc 1
expect_out "extra calls: run B made 2 more calls after record 5 (thread 0); run A's thread 0 ends there"
expect_out "run B continues with: seq 6 dgemm_"
expect_out "last matching record: seq 5 dgemm_"
pair --json
expect_json "d['divergences'][0]['kind'] == 'extra_calls' and d['divergences'][0]['ends_early'] == 'a' and d['divergences'][0]['record_b']['seq'] == 6 and d['divergences'][0]['extra'] == 2"

case=truncated
pair
expect_rc 1
expect_out "truncated: run B's file $TR/$case/b/main.dtrace is incomplete: file ends inside a frame"
expect_out "truncated: run B's thread 0 stops after 2 records"
expect_out "run A's thread 0 continues with 4 more"
expect_out "run A continues with: seq 2 dgemm_"
run_dd "$TR/$case/b" "$TR/$case/a"
expect_rc 1
expect_out "truncated: run A's file"
run_dd --root "$TR/$case/b"
expect_rc 1
checks=$((checks + 1))
grep -q '^detdiff: warning: .*main.dtrace is truncated.*do not publish it' "$T/err" ||
    fail "no truncation warning for --root"
checks=$((checks + 1))
grep -Eq '^[0-9a-f]{64}$' "$T/out" || fail "--root printed no root"
run_dd --root --json "$TR/$case/b"
expect_rc 1
expect_json "d['complete'] is False and len(d['root']) == 64"

case=truncated_end
pair
expect_rc 1
expect_out "truncated: run B's file $TR/$case/b/main.dtrace is incomplete: no closing frame"
expect_out "1 difference"

case=missing_process
pair
expect_rc 1
expect_out "run A started 1 more process (main.f1)"
run_dd "$TR/$case/b" "$TR/$case/a"
expect_rc 1
expect_out "run B started 1 more process (main.f1)"

case=more_processes
pair
expect_rc 1
expect_out "run B started 6 more processes (main.f21 ... main.f26)"
expect_out "  process main.f23: run B's file $TR/$case/b/main.f23.dtrace, 1 record in 1 thread"
expect_out "diverged: 6 of 8 processes differ, 6 differences"
expect_no_out "run A started"
pair --json
expect_json "[x['process'] for x in d['divergences'] if x['kind'] == 'missing_process' and x['present_in'] == 'b'] == ['main.f%d' % i for i in range(21, 27)]"
case=other_processes
pair
expect_rc 1
expect_out "run A started 1 process that run B did not (main.f3)"
expect_out "run B started 2 processes that run A did not (main.f4, main.f5)"

case=policy
pair
expect_rc 1
expect_out "header differs: policy_digest: run A \""
expect_out "2 of 2 processes differ"
pair --json
expect_json "all(x['kind'] == 'header' and x['field'] == 'policy_digest' and x['value_b'] == '0' * 64 for x in d['divergences'])"

case=bad_thread_end
pair
expect_rc 1
expect_out "damaged trace: in run B's file"
run_dd --root "$TR/$case/b"
expect_rc 1

# ---- hostile frames: read up to the damage, flagged, never a crash ---------
case=hostile_window
pair
expect_rc 1
expect_out "malformed window at byte"
for case in hostile_huge hostile_counts hostile_overrun hostile_garbage; do
    pair
    expect_rc 1
    expect_out "truncated: run B's file $TR/$case/b/main.dtrace is incomplete"
    expect_out "truncated: run B's thread 0 stops after 1 record "
    pair --json
    expect_rc 1
    expect_json "d['divergences'][0]['kind'] == 'truncated'"
done

case=nasty
pair
expect_rc 1
expect_out 'dgemm_\x1b[31m"\\ in run B'
expect_out 'm\x0a=\xff\xfe'
checks=$((checks + 1))
if LC_ALL=C grep -q "$(printf '\033')" "$T/out"; then fail "raw escape byte reached the terminal"; fi
pair --json
expect_json "d['divergences'][0]['record_b']['api'] == 'dgemm_\x1b[31m\"\\\\' and d['divergences'][0]['record_b']['params']['q'] == 'nan'"
run_dd --show "$TR/$case/b"
expect_rc 0

# ---- --show ---------------------------------------------------------------
case=nondet
run_dd --show "$TR/$case/a"
expect_rc 0
expect_out "run $TR/$case/a: 2 processes, root "
expect_out "process main ($TR/$case/a/main.dtrace"
expect_out "policy_name = default"
expect_out "pid = 100 (informational)"
expect_out "thread 0: 6 records, head "
expect_out "thread 2: 3 records"
expect_out "    2 dgemm_ transa=N transb=N m=4 n=4 k=4 alpha=1 lda=4 ldb=4 beta=0 ldc=4 | a:in:16x8:"
expect_out "blas.mode=passthrough | libtrain.so+0x1b80 forward"
run_dd --show "$TR/bad/header_only.dtrace"
expect_rc 0
expect_out "truncated: "

# ---- files that are not usable traces: one error line, exit 2 --------------
B=$TR/bad
run_dd "$B/good.dtrace" "$B/notrace.dtrace"
expect_rc 2
expect_error "$B/notrace.dtrace: not a detshim trace"
run_dd "$B/empty.dtrace" "$B/good.dtrace"
expect_rc 2
expect_error "$B/empty.dtrace"
# Version 1 roots were over whole streams, version 2 windows over record
# payloads, not record hashes: refused, saying so.
for v in 1 2; do
    run_dd "$B/good.dtrace" "$B/version$v.dtrace"
    expect_rc 2
    expect_error "$B/version$v.dtrace: trace format version $v, this detdiff reads version 3 only (its roots are over record hashes"
done
run_dd "$B/good.dtrace" "$B/version4.dtrace"
expect_rc 2
expect_error "$B/version4.dtrace: trace format version 4, this detdiff reads version 3;"
for f in magic_only header_huge header_field_overrun; do
    run_dd "$B/good.dtrace" "$B/$f.dtrace"
    expect_rc 2
    expect_error "$B/$f.dtrace"
done
run_dd "$B/good.dtrace" "$B/header_only.dtrace"
expect_rc 1
expect_out "no thread matching run A's thread 0"
# A directory's file that is not a trace is reported by name and compared
# with nothing; the rest of the run is still compared.
for sub in mixed1 mixed2; do
    run_dd "$B/$sub" "$B/good.dtrace"
    expect_rc 1
    expect_out "run A holds 1 file named like a trace that is not one"
    expect_out "$B/$sub/$(ls "$B/$sub" | grep -v '^main'): not a detshim trace (no DETSHIMT magic); run B has no process"
    expect_out "diverged: 0 of 1 process differ, 1 unreadable file, 1 difference"
done
run_dd "$B/emptydir" "$B/good.dtrace"
expect_rc 2
expect_error "$B/emptydir: no trace files (*.dtrace) here: not a DETSHIM_TRACE directory"
run_dd "$B/no-such-dir" "$B/good.dtrace"
expect_rc 2
expect_error "$B/no-such-dir: cannot read"
run_dd --root "$B/notrace.dtrace"
expect_rc 2
expect_error "not a detshim trace"
run_dd --show "$B/version1.dtrace"
expect_rc 2
expect_error "version"
run_dd --json "$B/good.dtrace" "$B/notrace.dtrace"
expect_rc 2
expect_json "d['result'] == 'error' and 'not a detshim trace' in d['error']"
run_dd --root "$B/good.dtrace"
expect_rc 0
expect_out "$(cat "$B/good.root")"

# ---- files planted in a run directory -----------------------------------
# One that no process of the other run stands for: named, never taken for
# identical, the other processes still compared; --root warns, exits 1.
P=$T/planted
mkdir -p "$P"
cp -r "$TR/identical/a" "$P/a"
cp -r "$TR/identical/a" "$P/b"
: > "$P/b/main.f3.dtrace"
run_dd "$P/a" "$P/b"
expect_rc 1
expect_out "$P/b/main.f3.dtrace: empty file, no detshim header (planted, or its process died before writing one?); run A has no process main.f3 to compare it with"
expect_out "diverged: 0 of 2 processes differ, 1 unreadable file, 1 difference"
run_dd --json "$P/a" "$P/b"
expect_rc 1
expect_json "d['result'] == 'diverged' and [(x['kind'], x['process'], x['present_in'], x['file_b'], x['reason'][:len(x['file_b']) + 12]) for x in d['divergences']] == [('unreadable_file', 'main.f3', 'b', '$P/b/main.f3.dtrace', '$P/b/main.f3.dtrace: empty file')]"
run_dd --root "$P/b"
expect_rc 1
expect_out "$(cat "$TR/identical/root_a")"
checks=$((checks + 1))
grep -q "^detdiff: warning: $P/b/main.f3.dtrace: empty file.*do not publish it$" "$T/err" ||
    fail "--root does not warn about the planted file"
run_dd --show "$P/b"
expect_rc 0
expect_out "not read: $P/b/main.f3.dtrace: empty file"
# A FIFO under a trace file's name is refused without hanging detdiff.
rm "$P/b/main.f3.dtrace"
mkfifo "$P/b/main.f3.dtrace"
what="detdiff on a planted FIFO"
timeout 20 "$DETDIFF" "$P/a" "$P/b" >"$T/out" 2>"$T/err"
rc=$?
expect_rc 1
expect_out "$P/b/main.f3.dtrace: cannot read: not a regular file"
rm "$P/b/main.f3.dtrace"
# One that stands for a process the other run has: trouble, by name.
: > "$P/b/main.f1.dtrace"
run_dd "$P/a" "$P/b"
expect_rc 2
expect_error "$P/b/main.f1.dtrace: empty file, no detshim header (planted, or its process died before writing one?); run A has a process main.f1 too, so the runs cannot be compared"
run_dd --json "$P/a" "$P/b"
expect_rc 2
expect_error "main.f1.dtrace: empty file"
: > "$P/a/main.f1.dtrace"
run_dd "$P/a" "$P/b"
expect_rc 2
expect_error "run B has a file for main.f1 too"
# A directory with no readable trace at all is not a run.
mkdir "$P/none"
: > "$P/none/main.dtrace"
run_dd --root "$P/none"
expect_rc 2
expect_error "$P/none/main.dtrace: empty file, no detshim header (planted, or its process died before writing one?) (no file of $P/none is a readable trace)"

# ---- usage --------------------------------------------------------------
run_dd
expect_rc 2
expect_error "usage: detdiff"
run_dd "$B/good.dtrace"
expect_rc 2
expect_error "expected two runs"
run_dd "$B/good.dtrace" "$B/good.dtrace" "$B/good.dtrace"
expect_rc 2
expect_error "got 3"
run_dd --frobnicate "$B/good.dtrace" "$B/good.dtrace"
expect_rc 2
expect_error "unknown option '--frobnicate'"
run_dd --show --root "$B/good.dtrace"
expect_rc 2
expect_error "cannot be combined"
run_dd --show --json "$B/good.dtrace"
expect_rc 2
expect_error "--show prints text only"
run_dd --root=$B/good.dtrace
expect_rc 0
run_dd --help
expect_rc 0
expect_out "detdiff [--json] [--all] RUN_A RUN_B"

# ---- damaged copies of a good trace: exit 1 or 2, never a crash ------------
F=$TR/fuzz
for f in "$F"/cut*.dtrace "$F"/flip*.dtrace "$F"/sealed*.dtrace; do
    for args in "$F/good.dtrace $f" "--all --json $F/good.dtrace $f" "--show $f"; do
        # shellcheck disable=SC2086
        run_dd $args
        checks=$((checks + 1))
        case $rc in
        0 | 1 | 2) ;;
        *) fail "exit status $rc (crash?)" ;;
        esac
    done
done

if [ "$failed" -ne 0 ]; then
    echo "FAIL test-detdiff: $failed of $checks checks failed" >&2
    exit 1
fi
echo "PASS test-detdiff: $checks checks"
