#!/bin/sh
# torch.distributed on the CPU: a 2-process DDP training with gloo
# (tests/programs/ddp_train.py, unseeded) under `detrun -p pytorch`.
#   - Plain runs differ; under the policy every rank ends with the same
#     weights, in every run, traced or not, and two traces diff identical.
#   - Each rank has its own trace file, named by its rank; DDP's gradient
#     all-reduce (through the hook the start-up hook registers) and a
#     direct torch.distributed.all_reduce are recorded with digests.
#   - A program's own DDP communication hook is kept, and recorded.
#   - Rank 1's data perturbed: detdiff names rank 1 as where it began.
# slow: 25
. "$(dirname "$0")/lib.sh"
/usr/bin/python3 -c "import torch.distributed as d; assert d.is_gloo_available()" 2>/dev/null ||
    skip "Debian's torch with gloo is not installed (python3-torch)"
unset DETSHIM_POLICY DETSHIM_SEED DDP_PERTURB RANK WORLD_SIZE MASTER_ADDR MASTER_PORT
T=$TOP/tests/programs/ddp_train.py
DETRUN=$TOP/scripts/detrun
weights() { sed -n 's/^rank [01] weights \([0-9a-f]*\) .*/\1/p' "$1" | sort -u | tr '\n' ' '; }
train() { out=$1; shift; timeout 300 "$@" > "$out" 2> "$out.err"; }

train "$WORK/plain1.out" $PY "$T"
train "$WORK/plain2.out" $PY "$T"
expect_eq "plain: both ranks end with one set of weights" 1 "$(weights "$WORK/plain1.out" | wc -w)"
expect_ne "plain: two unseeded runs give other weights" "$(weights "$WORK/plain1.out")" \
    "$(weights "$WORK/plain2.out")"

train "$WORK/a.out" $DETRUN -p pytorch -t "$WORK/a" -- $PY "$T"
expect_eq "under detrun: the run exits 0" 0 $?
train "$WORK/b.out" $DETRUN -p pytorch -t "$WORK/b" -- $PY "$T"
expect_eq "under detrun: both ranks end with the same weights" 1 "$(weights "$WORK/a.out" | wc -w)"
expect_eq "under detrun: two runs give the same weights" "$(weights "$WORK/a.out")" \
    "$(weights "$WORK/b.out")"
train "$WORK/untraced.out" $DETRUN -p pytorch -- $PY "$T"
expect_eq "under detrun without a trace: the same weights (the hook changes no bits)" \
    "$(weights "$WORK/a.out")" "$(weights "$WORK/untraced.out")"
$DETDIFF "$WORK/a" "$WORK/b" > "$WORK/ab.diff"
expect_eq "under detrun: the traces diff identical" 0 $?
expect_eq "one trace file per rank, named by its rank" "rank0.dtrace rank1.dtrace" \
    "$(ls "$WORK/a" | grep dtrace | tr '\n' ' ' | sed 's/ $//')"
$DETDIFF --show "$WORK/a/rank1.dtrace" > "$WORK/a1.show"
expect_grep "DDP's gradient all-reduce is recorded per bucket, digested before and after" \
    "ddp\.allreduce rank=1 nranks=2 comm=world coll=0 datatype=float32 count=[0-9]+ op=sum \| send:in:[0-9]+x4:[0-9a-f]+ recv:out:" \
    "$WORK/a1.show"
expect_grep "a direct torch.distributed.all_reduce is recorded" \
    "torch\.distributed\.all_reduce rank=1 nranks=2 comm=world coll=8 datatype=float32 count=1 op=sum" \
    "$WORK/a1.show"

train "$WORK/own.out" $DETRUN -p pytorch -t "$WORK/own" -- $PY "$T" own-hook
expect_eq "the program's own DDP hook: the run exits 0" 0 $?
expect_eq "the program's own DDP hook: both ranks agree" 1 "$(weights "$WORK/own.out" | wc -w)"
$DETDIFF --show "$WORK/own/rank0.dtrace" > "$WORK/own.show"
expect_grep "the program's own hook is kept and recorded by name" \
    "ddp\.comm_hook rank=0 .*nccl\.path=the program's DDP hook allreduce_hook" "$WORK/own.show"
expect_no_grep "and detshim's own hook is not registered over it" "ddp\.allreduce " "$WORK/own.show"

DDP_PERTURB=1 train "$WORK/bad.out" $DETRUN -p pytorch -t "$WORK/bad" -- $PY "$T"
$DETDIFF "$WORK/a" "$WORK/bad" > "$WORK/bad.diff"
expect_eq "rank 1 perturbed: the runs diverge" 1 $?
expect_grep "rank 1 perturbed: detdiff says rank 1 began it" \
    "^  rank1 diverged in its own work first .*: the other ranks' different results there follow from it" \
    "$WORK/bad.diff"
expect_grep "rank 1 perturbed: rank 0 first differs at a DDP all-reduce, with the same inputs" \
    "^  rank0: ddp\.allreduce #3 on communicator world \(rank 0 of 2\): same inputs, results differ" \
    "$WORK/bad.diff"
finish
