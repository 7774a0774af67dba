#!/bin/sh
# Step and op records (docs/frameworks.md) on Debian's PyTorch: the
# framework's view of where two runs part, before any intercepted call.
# - Two runs with real entropy (the pytorch policy with [rng] pin = none)
#   of a training whose one unseeded draw is added to layer3.weight's
#   gradient at step 4: detdiff's first line names step 4 and
#   layer3.weight, in text and JSON. With 10 layers, whose step records
#   come in five parts, the noisy layer10.weight in the second: the same.
# - Under -p pytorch: the same weights, traces that diff clean, one step
#   record per optimizer step with every parameter and Adam state tensor;
#   one more optimizer step changes the root, and detdiff names that step.
# - [trace] steps = off, or DETSHIM_TRACE_STEPS=off for one run: no step
#   records.
# - With ops on, a program whose one ATen op (a sum split across the
#   threads the program asks for) differs between runs: detdiff names the
#   op and its Python file:line as nondeterministic, and the file:line is
#   the same from another working directory; a thread the program starts
#   is seen too; an op with more tensors than a record holds says how
#   many inputs and outputs it left out.
# slow: 40
. "$(dirname "$0")/lib.sh"
DETRUN=$TOP/scripts/detrun
STEPS=$TOP/tests/programs/steps_torch.py
OPS=$TOP/tests/programs/ops_torch.py
$PY -c 'import torch' 2> /dev/null || skip "Debian's python3-torch is not installed"

# records DIR API: how many records of API the trace holds (a step's
# continuation records, part=N, left out).
records() {
    "$DETDIFF" --show "$1" | awk -v api="$2" '$2 == api && !/ part=/ { n++ } END { print n + 0 }'
}

cat > "$WORK/real.policy" <<POLICY
include = pytorch
[rng]
pin = none
POLICY
a=$($DETRUN -p "$WORK/real.policy" -t "$WORK/real-a" -- $PY "$STEPS")
b=$($DETRUN -p "$WORK/real.policy" -t "$WORK/real-b" -- $PY "$STEPS")
expect_ne "real entropy: two runs give different weights" "$a" "$b"
$DETDIFF "$WORK/real-a" "$WORK/real-b" > "$WORK/real.diff"
expect_eq "real entropy: detdiff exit" 1 $?
expect_eq "detdiff's first line names the first differing step and parameter" \
    "first differing step: 4, parameter layer3.weight" "$(head -1 "$WORK/real.diff")"
$DETDIFF --json "$WORK/real-a" "$WORK/real-b" > "$WORK/real.json"
got=$($PY -c 'import json, sys
s = json.load(open(sys.argv[1]))["first_step"]
print(s["step"], s["parameter"], s["framework"], s["kind"])' "$WORK/real.json")
expect_eq "detdiff --json: first_step" "4 layer3.weight torch nondeterministic" "$got"
for run in a b; do
    $DETRUN -p "$WORK/real.policy" -t "$WORK/deep-$run" -- $PY "$STEPS" 6 4 10 > /dev/null
done
"$DETDIFF" --show "$WORK/deep-a" | grep -c ' framework\.step .* step=4 ' > "$WORK/deep.parts"
expect_eq "10 layers: a step of 80 tensors is five records" 5 "$(cat "$WORK/deep.parts")"
$DETDIFF "$WORK/deep-a" "$WORK/deep-b" > "$WORK/deep.diff"
expect_eq "10 layers: detdiff names the parameter in the step's second part" \
    "first differing step: 4, parameter layer10.weight" "$(head -1 "$WORK/deep.diff")"

a=$($DETRUN -p pytorch -t "$WORK/p1" -- $PY "$STEPS")
b=$($DETRUN -p pytorch -t "$WORK/p2" -- $PY "$STEPS")
expect_eq "-p pytorch: two runs, same weights" "$a" "$b"
$DETDIFF "$WORK/p1" "$WORK/p2" > "$WORK/p12.diff" 2>&1
expect_eq "-p pytorch: traces diff clean" 0 $?
expect_eq "-p pytorch: one step record per optimizer step" 6 "$(records "$WORK/p1" framework.step)"
# Adam's 24 tensors take two records: the step's, and its part=1.
"$DETDIFF" --show "$WORK/p1" | grep ' framework.step .* step=6' | tr '\n' ' ' > "$WORK/last-step"
expect_grep "a step record holds the step number" "framework=torch optimizer=Adam step=6 " \
    "$WORK/last-step"
expect_grep "... every parameter by name" " layer1.weight:out:512x4:.* layer3.bias:out:4x4:" \
    "$WORK/last-step"
expect_grep "... and Adam's state" " state.layer3.weight.exp_avg:out:128x4:.* state.layer3.weight.exp_avg_sq:out:" \
    "$WORK/last-step"
$DETRUN -p pytorch -t "$WORK/p3" -- $PY "$STEPS" 7 > /dev/null
expect_ne "one more optimizer step: another root" "$($DETDIFF --root "$WORK/p1")" \
    "$($DETDIFF --root "$WORK/p3")"
$DETDIFF "$WORK/p1" "$WORK/p3" > "$WORK/p13.diff"
expect_eq "one more step: detdiff names it first" "first differing step: 7, made by run B only" \
    "$(head -1 "$WORK/p13.diff")"

# The hook keeps each optimizer's record layout beside it, not on it: a
# program may still pickle and deepcopy its optimizer.
printf 'import copy, io, pickle, torch\nm = torch.nn.Linear(3, 2)\nopt = torch.optim.Adam(m.parameters())\nfor _ in range(2):\n    m(torch.ones(1, 3)).sum().backward()\n    opt.step()\n    copy.deepcopy(opt)\n    torch.save(opt, io.BytesIO())\n    pickle.dumps(opt)\nprint("ok")\n' \
    > "$WORK/pickle_opt.py"
expect_eq "an optimizer with step records pickles and deep-copies" ok \
    "$($DETRUN -p pytorch -t "$WORK/pk" -- $PY "$WORK/pickle_opt.py" 2>&1)"
expect_eq "... and its steps are recorded" 2 "$(records "$WORK/pk" framework.step)"
# The layout is made again when a parameter's .data is replaced: by a
# transposed copy (other strides, same values) and by a clone (another
# pointer), the steps' digests are those of a run that replaced nothing.
printf 'import sys, torch\ntorch.manual_seed(0)\nm = torch.nn.Linear(6, 5)\nopt = torch.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)\nfor step in range(4):\n    m(torch.ones(2, 6)).sum().backward()\n    opt.step()\n    if sys.argv[1:] == ["swap"] and step == 1:\n        m.weight.data = m.weight.data.t().contiguous().t()\n    if sys.argv[1:] == ["swap"] and step == 2:\n        m.bias.data = m.bias.data.clone()\n' \
    > "$WORK/swap.py"
for run in same swap; do
    $DETRUN -p pytorch -t "$WORK/$run" -- $PY "$WORK/swap.py" $run
    "$DETDIFF" --show "$WORK/$run" | awk -F' [|] ' '$1 ~ / framework\.step / { print $2 }' > "$WORK/$run.steps"
done
expect_lines "a parameter's .data replaced: four step records" 4 "$WORK/swap.steps"
expect_eq "... with the digests of a run that replaced nothing" "$(cat "$WORK/same.steps")" \
    "$(cat "$WORK/swap.steps")"
DETSHIM_TRACE_STEPS=off $DETRUN -p pytorch -t "$WORK/off" -- $PY "$STEPS" > /dev/null
expect_eq "DETSHIM_TRACE_STEPS=off: no step records" 0 "$(records "$WORK/off" framework.step)"
$DETRUN -p default -t "$WORK/default" -- $PY "$STEPS" > /dev/null
expect_eq "the default policy: no step records" 0 "$(records "$WORK/default" framework.step)"

# Ops: the pytorch policy, with ops on for these runs only.
DETSHIM_TRACE_OPS=on $DETRUN -p pytorch -t "$WORK/o1" -- $PY "$OPS" 1 > "$WORK/o1.out"
DETSHIM_TRACE_OPS=on $DETRUN -p pytorch -t "$WORK/o2" -- $PY "$OPS" 2 > "$WORK/o2.out"
expect_ne "ops: 1 and 2 threads sum to other bits" "$(cat "$WORK/o1.out")" "$(cat "$WORK/o2.out")"
$DETDIFF "$WORK/o1" "$WORK/o2" > "$WORK/o12.diff"
expect_eq "ops: detdiff exit" 1 $?
expect_grep "detdiff names the op and its Python file:line as nondeterministic" \
    "^first differing op: aten\.sum\.default at ops_torch\.py:21 in main \(nondeterministic operation" \
    "$WORK/o12.diff"
expect_grep "... and the record says so too" "^  nondeterministic operation" "$WORK/o12.diff"
$DETDIFF --json "$WORK/o1" "$WORK/o2" > "$WORK/o12.json"
got=$($PY -c 'import json, sys
o = json.load(open(sys.argv[1]))["first_op"]
print(o["op"], o["site"], o["operand"], o["kind"])' "$WORK/o12.json")
expect_eq "detdiff --json: first_op" "aten.sum.default ops_torch.py:21 in main out0 nondeterministic" "$got"
expect_grep "an op record: op, site, shapes, dtypes, input and output digests" \
    " framework\.op op=aten\.sum\.default site=ops_torch\.py:21 in main shapes=\[1048576\] dtypes=float32 scalars= \| in0:in:1048576x4:[0-9a-f]+ out0:out:1x4:" \
    "$($DETDIFF --show "$WORK/o1" > "$WORK/o1.show"; echo "$WORK/o1.show")"
(cd /tmp && DETSHIM_TRACE_OPS=on $DETRUN -p pytorch -t "$WORK/o1-elsewhere" -- $PY "$OPS" 1 > /dev/null)
$DETDIFF "$WORK/o1" "$WORK/o1-elsewhere" > "$WORK/o1-elsewhere.diff" 2>&1
expect_eq "ops: from another working directory, the same trace" 0 $?
printf 'import threading, torch\ndef work():\n    torch.ones(3).sum()\nt = threading.Thread(target=work)\nt.start()\nt.join()\n' \
    > "$WORK/thread_ops.py"
DETSHIM_TRACE_OPS=on $DETRUN -p pytorch -t "$WORK/th" -- $PY "$WORK/thread_ops.py"
$DETDIFF --show "$WORK/th" > "$WORK/th.show"
expect_grep "ops: a thread the program starts is seen too" \
    " framework\.op op=aten\.sum\.default site=thread_ops\.py:3 in work " "$WORK/th.show"
# An op record holds 16 operands, up to 8 of them inputs: it says what it
# left out.
printf 'import torch\ntorch.cat([torch.ones(2)] * 10)\ntorch.ones(20).split(1)\n' > "$WORK/many_ops.py"
DETSHIM_TRACE_OPS=on $DETRUN -p pytorch -t "$WORK/many" -- $PY "$WORK/many_ops.py"
$DETDIFF --show "$WORK/many" > "$WORK/many.show"
expect_grep "ops: 10 inputs, 8 kept, the record says 2 left out" \
    " framework\.op op=aten\.cat\.default site=many_ops\.py:2 in <module> .* dropped_in=2 \| in0:in:.* in7:in:2x4:[0-9a-f]+ out0:out:20x4:" \
    "$WORK/many.show"
expect_grep "ops: 20 outputs, 15 kept, the record says 5 left out" \
    " framework\.op op=aten\.split\.Tensor .* dropped_out=5 \| in0:in:20x4:.* out14:out:1x4:[0-9a-f]+ \|" \
    "$WORK/many.show"
# A mistyped switch stops the program at start-up, one line, exit 2.
for var in DETSHIM_TRACE_STEPS DETSHIM_TRACE_OPS; do
    env $var=maybe LD_PRELOAD=$SHIM $PY -c 'print("ran")' > "$WORK/bad.out" 2> "$WORK/bad.err"
    expect_eq "$var=maybe: exit 2" 2 $?
    expect_grep "$var=maybe: named, with what to set" "^detshim: $var=maybe is not on or off" \
        "$WORK/bad.err"
    expect_lines "$var=maybe: the program did not run" 0 "$WORK/bad.out"
done
rm -rf "$WORK"/real-? "$WORK"/deep-? "$WORK"/th "$WORK"/many "$WORK"/pk "$WORK"/same "$WORK"/swap "$WORK"/p? "$WORK"/o? "$WORK"/o1-elsewhere "$WORK"/off "$WORK"/default
finish
