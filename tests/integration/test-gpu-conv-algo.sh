#!/bin/sh
# A cuDNN convolution run with an algorithm the program fixed itself
# (gpu_conv_algo, tests/programs/gpu_conv_algo.c), never taken from a list
# the shim filters. Pinned, a nondeterministic choice is replaced by the
# first deterministic algorithm cuDNN's heuristic lists for the
# convolution, on record; a deterministic choice is left alone.
# Passthrough leaves the program's choice, and the runs vary.
. "$(dirname "$0")/lib.sh"
P=$PROGS/gpu_conv_algo
unset DETSHIM_POLICY DETSHIM_SEED

$P > "$WORK/bare1.out" && $P > "$WORK/bare2.out"
expect_ne "without the shim, two runs differ" "$(cat "$WORK/bare1.out")" "$(cat "$WORK/bare2.out")"

shim "$WORK/a" $P > "$WORK/a.out"
shim "$WORK/b" $P > "$WORK/b.out"
expect_eq "pinned, two runs agree" "$(cat "$WORK/a.out")" "$(cat "$WORK/b.out")"
"$DETDIFF" "$WORK/a" "$WORK/b" > /dev/null
expect_eq "pinned, the traces diff identical" 0 $?
"$DETDIFF" --show "$WORK/a" > "$WORK/a.show"
expect_grep "pinned, the override is on record with the program's own choice" \
    "cudnnConvolutionForward algo=4 .*cuda\.algo=1 cuda\.override=algo 4->1 \(nondeterministic; the first deterministic one that fits the workspace\)" \
    "$WORK/a.show"

shim "$WORK/d" $P det > "$WORK/d.out"
expect_eq "pinned, the replacement computes what the deterministic choice computes" \
    "$(cat "$WORK/a.out")" "$(cat "$WORK/d.out")"
"$DETDIFF" --show "$WORK/d" > "$WORK/d.show"
expect_no_grep "a deterministic choice is not overridden" "cuda\.override" "$WORK/d.show"

printf '[cuda]\nmode = passthrough\n' > "$WORK/pass.policy"
DETSHIM_POLICY=$WORK/pass.policy shim "$WORK/p1" $P > "$WORK/p1.out"
DETSHIM_POLICY=$WORK/pass.policy shim "$WORK/p2" $P > "$WORK/p2.out"
expect_ne "passthrough, the program's choice runs and the runs differ" \
    "$(cat "$WORK/p1.out")" "$(cat "$WORK/p2.out")"
"$DETDIFF" --show "$WORK/p1" > "$WORK/p1.show"
expect_grep "passthrough, the record shows the algorithm run" \
    "cudnnConvolutionForward algo=4 .*cuda\.algo=4 \|" "$WORK/p1.show"
# When no deterministic algorithm fits the program's workspace, the
# nondeterministic one runs, and the shim says so once, trace or no trace.
FAKE_CUDNN_DET_MEMORY=1048576 LD_PRELOAD=$SHIM $P > /dev/null 2> "$WORK/nofit.err"
expect_grep "pinned, an algorithm that cannot be replaced is named on stderr without a trace" \
    "^detshim: a cuDNN forward convolution runs algorithm 4, chosen by the program, unpinned: it is nondeterministic and no deterministic algorithm fits its workspace$" \
    "$WORK/nofit.err"
expect_lines "once, though the program ran three convolutions" 1 "$WORK/nofit.err"

# A backend plan built on an engine the program chose itself cannot be
# pinned: the shim says so, once, and the trace marks the execution.
shim "$WORK/e7" $P engine 7 > "$WORK/e7.out" 2> "$WORK/e7.err"
expect_eq "a plan on a self-chosen engine still runs" "engine 7 executed" "$(cat "$WORK/e7.out")"
expect_grep "pinned, a plan on a nondeterministic engine is named on stderr" \
    "^detshim: a cuDNN execution plan was built on engine 7, which cuDNN marks nondeterministic, chosen by the program rather than from the engine heuristics the shim filters: its executions are not pinned" \
    "$WORK/e7.err"
expect_lines "the warning is one line" 1 "$WORK/e7.err"
"$DETDIFF" --show "$WORK/e7" > "$WORK/e7.show"
expect_grep "the execution is marked nondeterministic in the trace" \
    "cudnnBackendExecute engine=7 .*cuda\.algo=engine 7 \(nondeterministic\)" "$WORK/e7.show"
shim "$WORK/e3" $P engine 3 > /dev/null 2> "$WORK/e3.err"
expect_lines "a plan on a deterministic engine: nothing on stderr" 0 "$WORK/e3.err"
DETSHIM_POLICY=$WORK/pass.policy shim "$WORK/pe7" $P engine 7 > /dev/null 2> "$WORK/pe7.err"
expect_lines "passthrough: no warning (nothing was promised)" 0 "$WORK/pe7.err"
finish
