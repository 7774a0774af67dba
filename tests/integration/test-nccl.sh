#!/bin/sh
# NCCL on the fake libnccl (tests/fakes/nccl), whose sums change with
# NCCL_ALGO, the protocol and a channel count it draws per run when none
# is set. nccl_ranks (tests/programs/nccl_ranks.c) runs 3 or 4 ranks as
# processes, each printing a hash of its all-reduce result and whether it
# equals the ascending-rank sum ((x0 + x1) + x2) + ... it computes itself.
#   - Without the shim: runs differ; Ring and Tree differ from each other
#     and from the reference, and the fake's log shows it took Tree.
#   - Pinned (-p pytorch): runs agree to the bit, through every collective,
#     and diff identical, one trace file per rank; a program that sets
#     NCCL_ALGO=Tree itself gets Ring, recorded; with conflict = refuse its
#     communicator is refused with one line.
#   - Canonical: Ring and Tree, 3 and 4 ranks, give the reference's bits,
#     also over several rounds of the canonical path, and with one thread
#     driving every rank (ncclCommInitAll).
#   - A program that fetches NCCL with dlsym (as JAX does) is traced under
#     detrun (the audit module), and warned about under a bare preload.
#   - One rank's input perturbed: detdiff says which rank and call.
. "$(dirname "$0")/lib.sh"
P=$PROGS/nccl_ranks
unset DETSHIM_POLICY DETSHIM_SEED NCCL_ALGO NCCL_PROTO NCCL_MIN_NCHANNELS NCCL_MAX_NCHANNELS \
    FAKE_NCCL_LOG NCCL_TEST_ALGO NCCL_TEST_PERTURB RANK
N=100000
run() { timeout 120 "$@" | sort; }
ar() { sed -n 's/^rank [0-9]* allreduce \([0-9a-f]*\) .*/\1/p' "$1" | sort -u | tr '\n' ' '; }

# ---- without the shim -------------------------------------------------
run $P 3 $N > "$WORK/bare1.out"
expect_eq "bare: every rank gets one result" 1 "$(ar "$WORK/bare1.out" | wc -w)"
differs=0
for i in 2 3 4 5 6 7 8 9 10 11 12; do
    run $P 3 $N > "$WORK/bare$i.out"
    if [ "$(ar "$WORK/bare$i.out")" != "$(ar "$WORK/bare1.out")" ]; then differs=1; break; fi
done
expect_eq "bare: the channel count NCCL draws changes the bits between runs" 1 $differs
for n in 3 4; do
    NCCL_ALGO=Ring NCCL_MAX_NCHANNELS=2 run $P $n $N > "$WORK/ring$n.out"
    NCCL_ALGO=Tree NCCL_MAX_NCHANNELS=2 FAKE_NCCL_LOG="$WORK/tree$n.log" run $P $n $N \
        > "$WORK/tree$n.out"
    expect_ne "bare, $n ranks: Ring and Tree sum in other orders" "$(ar "$WORK/ring$n.out")" \
        "$(ar "$WORK/tree$n.out")"
    expect_grep "bare, $n ranks: the fake took the Tree path" \
        "^rank=0 nranks=$n op=AllReduce algo=Tree .*channels=2" "$WORK/tree$n.log"
    expect_no_grep "bare, $n ranks: Tree is not the ascending-rank sum" "reference equal" \
        "$WORK/tree$n.out"
    expect_no_grep "bare, $n ranks: nor is Ring" "reference equal" "$WORK/ring$n.out"
done

# ---- pinned -------------------------------------------------------------
for i in 1 2; do
    DETSHIM_POLICY=pytorch FAKE_NCCL_LOG="$WORK/pin$i.log" shim "$WORK/pin$i" run $P 3 $N all \
        > "$WORK/pin$i.out"
done
expect_eq "pinned: every rank and collective prints" 34 "$(wc -l < "$WORK/pin1.out" | tr -d ' ')"
expect_eq "pinned: two runs agree to the bit, every collective" "$(cat "$WORK/pin1.out")" \
    "$(cat "$WORK/pin2.out")"
$DETDIFF "$WORK/pin1" "$WORK/pin2" > "$WORK/pin.diff"
expect_eq "pinned: the traces diff identical" 0 $?
expect_eq "pinned: one trace file per rank, named by rank" "rank0.dtrace rank1.dtrace rank2.dtrace" \
    "$(ls "$WORK/pin1" | tr '\n' ' ' | sed 's/ $//')"
expect_grep "pinned: the fake ran Ring, Simple, 4 channels" \
    "op=AllReduce algo=Ring proto=Simple channels=4 " "$WORK/pin1.log"
$DETDIFF --show "$WORK/pin1/rank1.dtrace" > "$WORK/pin1.show"
expect_grep "the communicator is recorded with its rank, size and identity, and the decision" \
    "ncclCommInitRank rank=1 nranks=3 comm=w0 status=0 .*nccl.mode=pinned nccl.algo=Ring nccl.proto=Simple nccl.channels=4..4" \
    "$WORK/pin1.show"
expect_grep "an all-reduce records its send digest before and its receive digest after" \
    "ncclAllReduce rank=1 nranks=3 comm=w0 coll=0 datatype=float32 count=$N op=sum status=0 \| send:in:${N}x4:[0-9a-f]+ recv:out:${N}x4:" \
    "$WORK/pin1.show"
expect_eq "the fake's all-to-all routes every chunk to its rank" 3 \
    "$(grep -c "alltoall routed right" "$WORK/pin1.out")"
for api in ncclReduce ncclBroadcast ncclBcast ncclReduceScatter ncclAllGather ncclAlltoAll \
    ncclGather ncclScatter ncclSend ncclRecv; do
    expect_grep "$api is traced" "^ +[0-9]+ $api rank=1 " "$WORK/pin1.show"
done
expect_grep "a one-sided put is recorded with its peer, window offset, signal and source digest" \
    "ncclPutSignal rank=1 nranks=3 comm=w0 datatype=float32 count=$N peer=2 peer_win_offset=64 sig_idx=1 ctx=0 flags=0 status=0 \| send:in:${N}x4:[0-9a-f]+" \
    "$WORK/pin1.show"
expect_grep "a split is recorded with its new rank, size and identity, from parent and colour" \
    "ncclCommSplit rank=0 nranks=1 comm=w0/s0c1 color=1 key=1 status=0" "$WORK/pin1.show"
expect_grep "the split's collectives carry its identity" \
    "ncclAllReduce rank=0 nranks=1 comm=w0/s0c1 coll=0 datatype=float32 count=$N op=avg" "$WORK/pin1.show"
expect_grep "a shrink is recorded with its new rank, size, identity and what it left out" \
    "ncclCommShrink rank=1 nranks=2 comm=w0/k1 excluded=1 flags=0 status=0" "$WORK/pin1.show"
expect_grep "the shrunk communicator's collectives carry its identity" \
    "ncclAllReduce rank=1 nranks=2 comm=w0/k1 coll=0 datatype=float32 count=$N op=sum" \
    "$WORK/pin1.show"
expect_eq "the shrink's ranks agree; the rank shrunk away made none" "rank 0 rank 1 1" \
    "$(grep shrink-sum "$WORK/pin1.out" | cut -d' ' -f1,2 | tr '\n' ' ')$(grep shrink-sum \
    "$WORK/pin1.out" | cut -d' ' -f4 | sort -u | wc -l)"
DETSHIM_POLICY=pytorch NCCL_TEST_SCALABLE=1 shim "$WORK/scal" run $P 3 $N all > "$WORK/scal.out"
expect_eq "InitRankScalable: the same results as InitRank" "$(cat "$WORK/pin1.out")" \
    "$(cat "$WORK/scal.out")"
$DETDIFF --show "$WORK/scal/rank2.dtrace" > "$WORK/scal.show"
expect_grep "InitRankScalable is recorded as a world communicator, with its number of ids" \
    "ncclCommInitRankScalable rank=2 nranks=3 comm=w0 nid=1 status=0 .*nccl.mode=pinned" \
    "$WORK/scal.show"
expect_grep "calls in a group are recorded when it ends" \
    "ncclSend .*peer=2 .*nccl.group=launched at ncclGroupEnd" "$WORK/pin1.show"

# A program's own NCCL_ALGO, set after start-up, is overridden and recorded.
DETSHIM_POLICY=pytorch NCCL_TEST_ALGO=Tree FAKE_NCCL_LOG="$WORK/own.log" shim "$WORK/own" \
    run $P 3 $N all > "$WORK/own.out"
expect_eq "pinned: a program's NCCL_ALGO=Tree still gets the pinned bits" \
    "$(cat "$WORK/pin1.out")" "$(cat "$WORK/own.out")"
expect_no_grep "pinned: the fake never ran Tree" "algo=Tree" "$WORK/own.log"
$DETDIFF --show "$WORK/own/rank0.dtrace" > "$WORK/own.show"
expect_grep "the override is recorded at communicator creation" \
    "ncclCommInitRank .*nccl.override=NCCL_ALGO=Tree->Ring" "$WORK/own.show"
printf 'include = pytorch\n[nccl]\nconflict = refuse\n' > "$WORK/refuse.policy"
DETSHIM_POLICY="$WORK/refuse.policy" NCCL_TEST_ALGO=Tree LD_PRELOAD=$SHIM timeout 60 $P 3 1000 \
    > "$WORK/refuse.out" 2> "$WORK/refuse.err"
expect_ne "conflict = refuse: the program's communicator is refused" 0 $?
expect_grep "conflict = refuse: one line names the variable and the policy's value" \
    "^detshim: NCCL_ALGO=Tree was set by the program, but the policy pins it to Ring" \
    "$WORK/refuse.err"

# ---- canonical ----------------------------------------------------------
printf 'include = default\n[nccl]\nmode = canonical\n' > "$WORK/canon.policy"
for n in 3 4; do
    for a in Ring Tree; do
        DETSHIM_POLICY="$WORK/canon.policy" NCCL_ALGO=$a FAKE_NCCL_LOG="$WORK/c$n$a.log" \
            LD_PRELOAD=$SHIM run $P $n $N > "$WORK/c$n$a.out"
        expect_eq "canonical, $n ranks, $a: every rank has the ascending-rank sum" $n \
            "$(grep -c 'reference equal' "$WORK/c$n$a.out")"
    done
    expect_eq "canonical, $n ranks: Ring and Tree give the same bits" "$(ar "$WORK/c${n}Ring.out")" \
        "$(ar "$WORK/c${n}Tree.out")"
    expect_grep "canonical, $n ranks: the fake was set for Tree" "algo=Tree" "$WORK/c${n}Tree.log"
done
DETSHIM_POLICY="$WORK/canon.policy" shim "$WORK/cbig" run $P 3 1500000 > "$WORK/cbig.out"
expect_eq "canonical over several 4 MiB rounds: still the reference" 3 \
    "$(grep -c 'reference equal' "$WORK/cbig.out")"
$DETDIFF --show "$WORK/cbig/rank2.dtrace" > "$WORK/cbig.show"
expect_grep "canonical: the record says so" \
    "ncclAllReduce rank=2 .*nccl.mode=canonical .*nccl.order=canonical: ascending rank order" \
    "$WORK/cbig.show"

# One thread driving every rank (ncclCommInitAll, one group).
NCCL_ALGO=Tree NCCL_MAX_NCHANNELS=1 run $P initall 4 $N > "$WORK/ia-bare.out"
expect_grep "ncclCommInitAll, bare Tree: the ranks agree, not with the ascending-rank sum" \
    "reference differs ranks agree" "$WORK/ia-bare.out"
DETSHIM_POLICY="$WORK/canon.policy" NCCL_ALGO=Tree shim "$WORK/ia" run $P initall 4 1500000 \
    > "$WORK/ia.out"
expect_grep "ncclCommInitAll, canonical: one thread drives 4 ranks to the reference" \
    "reference equal ranks agree" "$WORK/ia.out"
$DETDIFF --show "$WORK/ia" > "$WORK/ia.show"
expect_grep "ncclCommInitAll: each rank's all-reduce is recorded at the group's end" \
    "ncclAllReduce rank=3 nranks=4 comm=a0 coll=0 .*nccl.order=canonical.*nccl.group=launched" \
    "$WORK/ia.show"

# A program that dlopens libnccl and fetches its functions with dlsym (JAX).
D=$PROGS/nccl_dlsym
DETSHIM_POLICY=pytorch shim "$WORK/dl-bare" $D > "$WORK/dl-bare.out" 2> "$WORK/dl-bare.err"
expect_grep "dlsym, bare LD_PRELOAD: the exit warning names libnccl and the fix" \
    "^detshim: libnccl.so.2 was loaded but none of its calls reached the shim: .*LD_AUDIT=" \
    "$WORK/dl-bare.err"
$TOP/scripts/detrun -p pytorch -t "$WORK/dl" -- $D > "$WORK/dl.out" 2> "$WORK/dl.err"
expect_eq "dlsym under detrun: the same result" "$(cat "$WORK/dl-bare.out")" "$(cat "$WORK/dl.out")"
$DETDIFF --show "$WORK/dl" > "$WORK/dl.show"
expect_grep "dlsym under detrun: the audit module hands NCCL's functions to the shim" \
    "ncclAllReduce rank=2 nranks=3 comm=a0 coll=0 " "$WORK/dl.show"

# ---- one rank's data perturbed -------------------------------------------
DETSHIM_POLICY=pytorch NCCL_TEST_PERTURB=1 shim "$WORK/bad" run $P 3 $N all > "$WORK/bad.out"
$DETDIFF "$WORK/pin1" "$WORK/bad" > "$WORK/bad.diff"
expect_eq "perturbed: detdiff reports a divergence" 1 $?
expect_grep "perturbed: rank 1's all-reduce inputs differ" \
    "^process rank1: diverged" "$WORK/bad.diff"
expect_grep "perturbed: detdiff lines the ranks up in collective order" \
    "^  rank0: ncclAllReduce #0 on communicator w0 \(rank 0 of 3\): same inputs, results differ" \
    "$WORK/bad.diff"
expect_grep "perturbed: the rank whose inputs differ is named as where it entered" \
    "^  inputs differ on rank1 only: the divergence entered there" "$WORK/bad.diff"
$DETDIFF --json "$WORK/pin1" "$WORK/bad" > "$WORK/bad.json"
expect_eq "perturbed, --json: the ranks summary names rank1's inputs at all-reduce #0 on w0" \
    "inputs ['rank1'] ncclAllReduce 0 w0 3" "$(python3 -c 'import json,sys
r = json.load(open(sys.argv[1]))["ranks"]
print(r["cause"], r["culprits"], r["first"]["api"], r["first"]["collective"], r["first"]["communicator"], len(r["firsts"]))' "$WORK/bad.json")"
# Passthrough: the fake's drawn channel count shows as the collective's own doing.
DETSHIM_POLICY=passthrough shim "$WORK/pt1" run $P 3 $N > "$WORK/pt1.out"
for i in 2 3 4 5 6 7 8 9 10 11 12; do
    rm -rf "$WORK/pt2"
    DETSHIM_POLICY=passthrough shim "$WORK/pt2" run $P 3 $N > "$WORK/pt2.out"
    [ "$(ar "$WORK/pt1.out")" = "$(ar "$WORK/pt2.out")" ] || break
done
$DETDIFF "$WORK/pt1" "$WORK/pt2" > "$WORK/pt.diff"
expect_eq "passthrough: runs whose channel counts differ diverge" 1 $?
expect_grep "passthrough: detdiff blames the collective itself, not a rank" \
    "^  inputs agree on every rank shown; results differ on rank0, rank1, rank2: the collective's own" \
    "$WORK/pt.diff"
finish
