#!/bin/sh
# Wrong input on purpose: each mistake gets one line naming what is wrong
# and the documented exit status; nothing is silently ignored. And a
# program that touches nothing we intercept behaves exactly as without us.
. "$(dirname "$0")/lib.sh"
P=$PROGS/blas_prog

# run_err WHAT WANT_STATUS PATTERN ENV... : run the BLAS program with ENV
run_err() {
    what=$1 want=$2 pattern=$3
    shift 3
    env LD_PRELOAD=$SHIM "$@" $P > "$WORK/out" 2> "$WORK/err"
    expect_eq "$what: exit status" "$want" $?
    expect_grep "$what: message" "$pattern" "$WORK/err"
    expect_lines "$what: one line" 1 "$WORK/err"
}

run_err "unknown policy name" 2 '^detshim: DETSHIM_POLICY=nosuch: no policy of that name' \
    DETSHIM_POLICY=nosuch
printf '[blas]\nmode = passthrough\nfrobnicate = yes\n' > "$WORK/bad.policy"
run_err "unknown policy key" 2 "^detshim: $WORK/bad.policy:3: unknown key 'frobnicate' in \\[blas\\]" \
    DETSHIM_POLICY=$WORK/bad.policy
printf '[blas]\nmode passthrough\n' > "$WORK/syntax.policy"
run_err "policy syntax error" 2 "^detshim: $WORK/syntax.policy:2: syntax error" \
    DETSHIM_POLICY=$WORK/syntax.policy
printf 'include = nosuch\n[blas]\nmode = canonical\n' > "$WORK/badinc.policy"
run_err "include of a missing policy" 2 \
    "^detshim: $WORK/badinc.policy:1: cannot include 'nosuch': no nosuch.policy" \
    DETSHIM_POLICY=$WORK/badinc.policy
printf 'include = cyc2\n' > "$WORK/cyc1.policy"
printf '# two\ninclude = cyc1\n' > "$WORK/cyc2.policy"
run_err "include cycle" 2 \
    "^detshim: $WORK/cyc2.policy:2: include cycle: 'cyc1' is already being read; .*\\(included from cyc1.policy:1\\)$" \
    DETSHIM_POLICY=$WORK/cyc1.policy
printf 'include = default\n[env]\nLD_PRELOAD = /tmp/x.so\n' > "$WORK/preload.policy"
run_err "[env] may not set LD_PRELOAD" 2 \
    "^detshim: $WORK/preload.policy:3: \\[env\\] cannot set LD_PRELOAD" \
    DETSHIM_POLICY=$WORK/preload.policy
touch "$WORK/a-file"
run_err "trace dir is a file" 2 "^detshim: DETSHIM_TRACE=$WORK/a-file: cannot create or write" \
    DETSHIM_TRACE=$WORK/a-file
run_err "trace dir cannot be created" 2 '^detshim: DETSHIM_TRACE=/proc/detshim-nope: cannot create' \
    DETSHIM_TRACE=/proc/detshim-nope
run_err "bad DETSHIM_ON_ERROR" 2 '^detshim: DETSHIM_ON_ERROR=maybe is not fail or warn' \
    DETSHIM_ON_ERROR=maybe
run_err "bad DETSHIM_LOG" 2 '^detshim: DETSHIM_LOG=loud is not quiet, info or debug' \
    DETSHIM_LOG=loud
run_err "bad DETSHIM_SEED" 2 '^detshim: DETSHIM_SEED=-3 is not a non-negative whole number' \
    DETSHIM_SEED=-3

shim "$WORK/used" $P > /dev/null
run_err "trace dir holding an earlier run" 2 "already holds a trace \\(main.dtrace\\) from an earlier run" \
    DETSHIM_TRACE=$WORK/used

# warn: the program runs, correctly, and says what it runs without.
plain=$($P)
run_err "warn mode with a bad policy" 0 'continuing without the policy' \
    DETSHIM_ON_ERROR=warn DETSHIM_POLICY=nosuch
expect_eq "warn mode: results unchanged" "$plain" "$(cat "$WORK/out")"
run_err "warn mode with an unusable trace dir" 0 'continuing without the trace' \
    DETSHIM_ON_ERROR=warn DETSHIM_TRACE=$WORK/a-file

# A shell running ls and make with the shim set: same output, no trace.
ls -la "$TOP/include" > "$WORK/ls.plain" 2>&1
LD_PRELOAD=$SHIM DETSHIM_TRACE=$WORK/quiet sh -c "ls -la $TOP/include; make --version > /dev/null" \
    > "$WORK/ls.shim" 2> "$WORK/ls.err"
expect_eq "ls under the shim: same output" "$(cat "$WORK/ls.plain")" "$(cat "$WORK/ls.shim")"
expect_lines "ls under the shim: nothing on stderr" 0 "$WORK/ls.err"
expect_eq "ls under the shim: no trace file" "" "$(ls "$WORK/quiet" 2>/dev/null)"

# detdiff on things that are not (whole) traces.
echo "not a trace" > "$WORK/junk.dtrace"
$DETDIFF "$WORK/junk.dtrace" "$WORK/used" > "$WORK/dd.out" 2> "$WORK/dd.err"
expect_eq "detdiff on a non-trace file: exit" 2 $?
expect_grep "detdiff on a non-trace file: message" "^detdiff: .*junk.dtrace: not a detshim trace" "$WORK/dd.err"
expect_lines "detdiff on a non-trace file: one line" 1 "$WORK/dd.err"
$DETDIFF "$WORK/nowhere" "$WORK/used" > "$WORK/dd.out" 2> "$WORK/dd.err"
expect_eq "detdiff on a missing path: exit" 2 $?

# A run killed with SIGKILL after enough calls to fill its buffers: the
# trace reads back to its last whole record and detdiff says truncated.
shim "$WORK/full" $P repeat 400 > /dev/null
# (in a child shell, so the "Killed" notice stays out of the test's output)
sh -c "LD_PRELOAD=$SHIM DETSHIM_TRACE=$WORK/killed $P repeat 400 kill 1" > /dev/null 2>&1
$DETDIFF --show "$WORK/killed" > "$WORK/show.out" 2>&1
expect_grep "killed run: records read back" " cblas_dgemm " "$WORK/show.out"
$DETDIFF "$WORK/full" "$WORK/killed" > "$WORK/dd.out" 2>&1
expect_eq "detdiff full vs killed: exit" 1 $?
expect_grep "detdiff full vs killed: truncated" "truncated" "$WORK/dd.out"
finish
