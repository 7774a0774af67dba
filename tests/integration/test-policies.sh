#!/bin/sh
# needs: venv
# Framework policies on unmodified, unseeded programs: PyTorch under
# `detrun -p pytorch` (DataLoader with shuffle and two workers, dropout,
# Adam) and numpy under `-p numpy` give the same weights hash run to run
# and whatever thread count the user sets, where plain runs differ. The
# policy's settings are in the trace header, and detdiff names a variable
# the user changed before comparing any record.
# slow: 30
. "$(dirname "$0")/lib.sh"
DETRUN=$TOP/scripts/detrun
TRAIN=$TOP/tests/programs/torch_train.py
NPTRAIN=$TOP/tests/programs/np_train.py

# PyTorch: plain runs differ (nothing is seeded) ...
a=$($PY "$TRAIN")
b=$($PY "$TRAIN")
expect_ne "torch_train.py without the shim: two runs differ" "$a" "$b"
# ... under the policy they agree, whatever OMP_NUM_THREADS the user set.
r1=$(OMP_NUM_THREADS=1 $DETRUN -p pytorch -t "$WORK/t1" -- $PY "$TRAIN")
r2=$(OMP_NUM_THREADS=2 $DETRUN -p pytorch -t "$WORK/t2" -- $PY "$TRAIN")
r3=$($DETRUN -p pytorch -t "$WORK/t3" -- $PY "$TRAIN")
case $r1 in weights\ ?*) pass ;; *) fail "torch_train.py under -p pytorch printed '$r1'" ;; esac
expect_eq "-p pytorch: OMP_NUM_THREADS=1 vs 2, same weights" "$r1" "$r2"
expect_eq "-p pytorch: unset vs OMP_NUM_THREADS=1, same weights" "$r1" "$r3"
$DETDIFF "$WORK/t1" "$WORK/t2" > "$WORK/t12.diff" 2>&1
expect_eq "-p pytorch: OMP_NUM_THREADS=1 vs 2, traces diff clean" 0 $?
$DETDIFF --show "$WORK/t2" > "$WORK/t2.show"
expect_grep "header: the pinned value" "^  settings = .*OMP_NUM_THREADS=1" "$WORK/t2.show"
expect_grep "header: the user's value the policy replaced" \
    "OMP_NUM_THREADS: the policy, over the user's 2" "$WORK/t2.show"
expect_grep "header: the start-up hook, without install paths" \
    "PYTHONPATH=\\(detshim hook\\)" "$WORK/t2.show"
# The hook really ran in the program: deterministic algorithms are on.
on=$($DETRUN -p pytorch -- $PY -c 'import torch; print(torch.are_deterministic_algorithms_enabled(), torch.backends.cudnn.deterministic, torch.backends.cudnn.benchmark)')
expect_eq "-p pytorch: torch's deterministic switches" "True True False" "$on"

# A C program linked to libgomp reads OMP_NUM_THREADS in libgomp's
# constructor, before the shim's: detrun sets the policy's variables
# before the program starts, so the policy still wins.
expect_eq "detrun: libgomp's own constructor sees the policy's OMP_NUM_THREADS" 1 \
    "$(OMP_NUM_THREADS=2 $DETRUN -p pytorch -- "$PROGS/omp_prog")"

# A policy that lets the user's count win: detdiff reports the variable
# before any record.
printf 'include = pytorch\n[env]\nOMP_NUM_THREADS ?= 1\n' > "$WORK/userwins.policy"
OMP_NUM_THREADS=1 $DETRUN -p "$WORK/userwins.policy" -t "$WORK/u1" -- $PY -c 'import torch' 
OMP_NUM_THREADS=2 $DETRUN -p "$WORK/userwins.policy" -t "$WORK/u2" -- $PY -c 'import torch'
$DETDIFF "$WORK/u1" "$WORK/u2" > "$WORK/u12.diff" 2>&1
expect_eq "user's value wins: runs differ" 1 $?
expect_grep "detdiff names the variable and who set it" \
    "environment differs: OMP_NUM_THREADS: run A \"1\" set by the policy; run B \"2\" set by the user \\(the policy.s \?= gives way\\)" \
    "$WORK/u12.diff"

# ATen dies of an illegal instruction on a capability the CPU lacks, so
# the shim checks it: asked for AVX-512 on a CPU without it, torch gets
# "default" and runs, and the header says why.
if grep -qw avx512bw /proc/cpuinfo; then
    echo "   (this CPU has AVX-512: the lowering is not exercised here)"
else
    printf 'include = pytorch\n[pytorch]\ncpu_capability = avx512\n' > "$WORK/avx512.policy"
    $DETRUN -p "$WORK/avx512.policy" --explain > "$WORK/avx512.explain"
    expect_grep "cpu_capability above the CPU: lowered to default" \
        "^  ATEN_CPU_CAPABILITY=default$" "$WORK/avx512.explain"
    out=$($DETRUN -p "$WORK/avx512.policy" -- $PY -c 'import torch; print(torch.ones(64).exp().sum().item())' 2>&1)
    expect_eq "cpu_capability above the CPU: torch runs" "173.97..." "$(echo "$out" | cut -c1-6)..."
fi

# numpy: unseeded default_rng, shuffled minibatches, dropout; Debian's
# numpy and numpy 2.x from PyPI give the same bits under the policy.
a=$($PY "$NPTRAIN")
b=$($PY "$NPTRAIN")
expect_ne "np_train.py without the shim: two runs differ" "$a" "$b"
n1=$($DETRUN -p numpy -t "$WORK/n1" -- $PY "$NPTRAIN")
n2=$(OMP_NUM_THREADS=2 OPENBLAS_NUM_THREADS=2 $DETRUN -p numpy -t "$WORK/n2" -- $PY "$NPTRAIN")
expect_eq "-p numpy: two runs, same weights" "$n1" "$n2"
$DETDIFF "$WORK/n1" "$WORK/n2" > "$WORK/n12.diff" 2>&1
expect_eq "-p numpy: traces diff clean" 0 $?
n3=$($DETRUN -p numpy -- "$VENV_PY" "$NPTRAIN")
expect_eq "-p numpy: numpy 2.x from PyPI, same weights as Debian's numpy" "$n1" "$n3"
finish
