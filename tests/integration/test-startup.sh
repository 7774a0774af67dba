#!/bin/sh
# Start-up order: an intercepted call from another library's constructor,
# before ours has run, starts the shim lazily; it is traced, and a bad
# configuration still stops the program there.
. "$(dirname "$0")/lib.sh"
# Passthrough: these checks compare against the vendor BLAS's own bits.
export DETSHIM_POLICY=passthrough
P=$PROGS/blas_prog
EARLY=$FAKES/libearly.so

plain=$($P)
out=$(LD_PRELOAD="$SHIM $EARLY" DETSHIM_TRACE=$WORK/a $P 2> "$WORK/a.err")
expect_eq "exit status with an early caller" 0 $?
expect_eq "results with an early caller" "$plain" "$out"
expect_grep "the early call returned the right value" "^early: 14$" "$WORK/a.err"
$DETDIFF --show "$WORK/a" > "$WORK/show.out"
expect_grep "the early call is the first record" "^ +0 cblas_ddot n=3 " "$WORK/show.out"
expect_grep "... made from the early library's constructor" "libearly.so" "$WORK/show.out"

LD_PRELOAD="$SHIM $EARLY" DETSHIM_POLICY=nosuch $P > /dev/null 2> "$WORK/b.err"
expect_eq "bad policy met first by an early call: exit" 2 $?
expect_grep "bad policy met first by an early call: message" "^detshim: DETSHIM_POLICY=nosuch" "$WORK/b.err"
expect_no_grep "bad policy: the early call never ran" "^early:" "$WORK/b.err"
finish
