#!/bin/sh
# Processes and threads: a file per process named by lineage (fork, spawn,
# exec), so two runs pair up by name; thread start order never shows.
. "$(dirname "$0")/lib.sh"
P=$PROGS/procs_prog

shim "$WORK/t1" $P threads 0 1 2 3 > /dev/null
shim "$WORK/t2" $P threads 3 1 0 2 > /dev/null
$DETDIFF "$WORK/t1" "$WORK/t2" > "$WORK/t.out"
expect_eq "threads started in another order: detdiff exit" 0 $?
expect_eq "threads started in another order: same root" \
    "$($DETDIFF --root "$WORK/t1")" "$($DETDIFF --root "$WORK/t2")"
$DETDIFF --show "$WORK/t1" > "$WORK/t-show.out"
expect_grep "four recording threads" "thread 4: 20 records" "$WORK/t-show.out"
shim "$WORK/t3" $P threads 0 1 2 > /dev/null
$DETDIFF "$WORK/t1" "$WORK/t3" > "$WORK/t3.out"
expect_eq "a missing thread is a divergence" 1 $?

shim "$WORK/f1" $P fork > /dev/null
shim "$WORK/f2" $P fork > /dev/null
expect_eq "fork: one file per process" "main.dtrace main.f1.dtrace main.f2.dtrace" \
    "$(cd "$WORK/f1" && echo *)"
$DETDIFF "$WORK/f1" "$WORK/f2" > "$WORK/f.out"
expect_eq "fork: detdiff exit" 0 $?
$DETDIFF --show "$WORK/f1" > "$WORK/f-show.out"
expect_no_grep "fork: every process closed its trace (the _exit child too)" "truncated|no closing" "$WORK/f-show.out"

shim "$WORK/v1" $P vfork > /dev/null
expect_eq "vfork: only the parent's file" "main.dtrace" "$(cd "$WORK/v1" && echo *)"
$DETDIFF --show "$WORK/v1" > "$WORK/v-show.out"
expect_grep "vfork: the parent's two calls, none of the child's" "thread 0: 2 records" "$WORK/v-show.out"
expect_no_grep "vfork: the parent's trace is whole" "truncated|no closing|damaged" "$WORK/v-show.out"

shim "$WORK/e1" $P exec > /dev/null
shim "$WORK/e2" $P exec > /dev/null
expect_eq "exec: the old image and the new one each have a file" \
    "main.dtrace main.e.dtrace main.e.f1.dtrace main.e.f2.dtrace" "$(cd "$WORK/e1" && echo *)"
$DETDIFF --show "$WORK/e1/main.dtrace" > "$WORK/e-show.out"
expect_grep "exec: the records made before exec survive it" "thread 0: 2 records" "$WORK/e-show.out"
$DETDIFF "$WORK/e1" "$WORK/e2" > "$WORK/e.out"
expect_eq "exec: detdiff exit" 0 $?

shim "$WORK/c1" $P closefds "$WORK/user.txt" > /dev/null 2> "$WORK/c.err"
expect_eq "program closed the trace fd: exit status (fail closed)" 2 $?
expect_eq "program closed the trace fd: its own file intact" "user data" "$(cat "$WORK/user.txt")"
expect_grep "program closed the trace fd: message" "^detshim: the program closed the trace file of process main" "$WORK/c.err"

# Ranks started separately (mpirun-style) share one directory by name.
RANK=0 shim "$WORK/r" $P fork > /dev/null
OMPI_COMM_WORLD_RANK=1 shim "$WORK/r" $P fork > /dev/null
expect_eq "ranks: files named by rank, children by lineage" \
    "rank0.dtrace rank0.f1.dtrace rank0.f2.dtrace rank1.dtrace rank1.f1.dtrace rank1.f2.dtrace" \
    "$(cd "$WORK/r" && echo *)"
RANK=0 shim "$WORK/r" $P fork > /dev/null 2> "$WORK/r.err"
expect_eq "ranks: a rank's earlier trace is still refused" 2 $?

shim "$WORK/s1" $PY $TOP/tests/programs/spawn_prog.py > "$WORK/s1.txt"
shim "$WORK/s2" $PY $TOP/tests/programs/spawn_prog.py > /dev/null
expect_eq "spawned Python children still run" "$($PY $TOP/tests/programs/spawn_prog.py)" "$(cat "$WORK/s1.txt")"
expect_eq "spawn: a file per recording process, numbered in order" \
    "main.dtrace main.s1.dtrace main.s2.dtrace" "$(cd "$WORK/s1" && echo *)"
$DETDIFF "$WORK/s1" "$WORK/s2" > "$WORK/s.out"
expect_eq "spawn: detdiff exit" 0 $?
# joblib hands tasks to whichever worker is free first, so each worker's
# trace changes from run to run; the default policy's JOBLIB_MULTIPROCESSING
# = 0 runs them in order in the calling process (docs/verify.md).
JOBLIB_PROG='from joblib import Parallel, delayed
import numpy as np
def f(i):
    a = np.full((40, 40), float(i))
    return float((a @ a).sum())
print(sum(Parallel(n_jobs=2, backend="loky")(delayed(f)(i) for i in range(40))))'
if $PY -c 'import joblib' 2> /dev/null; then
    DETRUN=$TOP/scripts/detrun
    for r in a b; do
        $DETRUN -p default -t "$WORK/joblib-$r" -- $PY -c "$JOBLIB_PROG" > "$WORK/joblib-$r.out"
    done
    expect_eq "joblib under the default policy: the program's result" \
        "$($PY -c "$JOBLIB_PROG")" "$(cat "$WORK/joblib-a.out")"
    expect_eq "joblib under the default policy: the tasks run in the calling process" \
        "attestation.json main.dtrace" "$(cd "$WORK/joblib-a" && echo *)"
    $DETDIFF "$WORK/joblib-a" "$WORK/joblib-b" > "$WORK/joblib.diff"
    expect_eq "joblib under the default policy: two runs diff identical" 0 $?
    rm -rf "$WORK/joblib-a" "$WORK/joblib-b"
else
    skip_check "joblib's workers" "Debian's python3-joblib is not installed"
fi
finish
