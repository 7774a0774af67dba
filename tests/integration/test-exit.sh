#!/bin/sh
# Ending while the shim is busy: a SIGTERM handler that calls exit() lands
# inside the shim's own trace write (made to, by a preloaded write(2) that
# raises it, and by chance in timed runs), and exit() while other threads
# still call BLAS. The program always ends; a trace that lost records says
# so, never "complete".
. "$(dirname "$0")/lib.sh"
P=$PROGS/exit_prog
RAISE=$FAKES/libraise_in_write.so

for at in 1 2 3; do
    LD_PRELOAD="$RAISE $SHIM" DETSHIM_TRACE=$WORK/raise$at RAISE_AT_TRACE_WRITE=$at \
        timeout -s KILL 30 $P sigterm 100000 > "$WORK/raise$at.out" 2> "$WORK/raise$at.err"
    expect_eq "SIGTERM raised inside trace write $at: the handler's exit(3) ends it" 3 $?
done
expect_grep "SIGTERM while opening the file: one line says what is missing" \
    '^detshim: the trace of process main[.a-z0-9]* in .* is incomplete: a thread was starting its stream or opening the file' \
    "$WORK/raise1.err"
expect_eq "SIGTERM while opening the file: no half-made file left" "" "$(ls "$WORK/raise1")"
$DETDIFF --root "$WORK/raise2" > /dev/null 2> "$WORK/raise2.diff"
expect_ne "SIGTERM while holding the buffer: detdiff --root refuses to vouch" 0 $?
expect_grep "SIGTERM while holding the buffer: detdiff says incomplete and why" \
    'marked it incomplete: 1 thread was inside the shim when the process exited' "$WORK/raise2.diff"

# 20 timed runs: SIGTERM at a different moment of a call loop each time,
# once the program is ready (its handler set, its trace open). A run still
# going 20 s after the signal is a hang.
state() { sed 's/^.*) //; s/ .*//' "/proc/$1/stat" 2> /dev/null; }
exited=0
inside=0
i=0
while [ $i -lt 20 ]; do
    rm -f "$WORK/timed.err" # an old "ready" must not start the clock
    LD_PRELOAD=$SHIM DETSHIM_TRACE=$WORK/timed $P sigterm 0 > /dev/null 2> "$WORK/timed.err" &
    pid=$!
    n=0
    until grep -q '^ready$' "$WORK/timed.err" 2> /dev/null || [ $n -ge 400 ]; do sleep 0.05; n=$((n + 1)); done
    sleep "0.$(printf '%03d' $((i * 7)))"
    kill -TERM $pid 2> /dev/null
    n=0
    while [ -e /proc/$pid ] && [ "$(state $pid)" != Z ] && [ $n -lt 400 ]; do
        sleep 0.05
        n=$((n + 1))
    done
    [ "$(state $pid)" = Z ] || kill -KILL $pid 2> /dev/null
    wait $pid
    [ $? -eq 3 ] && exited=$((exited + 1))
    grep -q 'inside the shim' "$WORK/timed.err" && inside=$((inside + 1))
    rm -rf "$WORK/timed"
    i=$((i + 1))
done
expect_eq "SIGTERM handler calling exit: runs that exit with its status" 20 $exited
echo "   ($inside of the 20 signals landed while the thread held its trace buffer)"

# exit() with three threads calling BLAS: what the trace holds is either
# every call that returned, or it says it is incomplete.
for run in 1 2 3; do
    LD_PRELOAD=$SHIM DETSHIM_TRACE=$WORK/threads$run timeout -s KILL 30 \
        $P threads 3 100 "$WORK/counts$run" 2> /dev/null
    expect_eq "exit with threads calling (run $run): exit status" 0 $?
    calls=$(od -An -tu8 "$WORK/counts$run" | tr -s ' \n' '  ' | sed 's/^ //; s/ $//; s/ /+/g')
    calls=$(( $calls ))
    json=$($DETDIFF --root --json "$WORK/threads$run" 2> /dev/null)
    records=$(echo "$json" | sed -n 's/.*"records":\([0-9]*\).*/\1/p')
    case $json in
    *'"complete":false'*) pass ;;
    *'"complete":true'*)
        if [ "$records" -ge "$calls" ]; then pass; else
            fail "exit with threads calling (run $run): complete with $records records of $calls calls"
        fi ;;
    *) fail "exit with threads calling (run $run): detdiff --root --json said '$json'" ;;
    esac
    rm -rf "$WORK/threads$run"
done
finish
