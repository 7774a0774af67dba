#!/bin/sh
# needs: venv
# Step records for Keras (tensorflow-cpu) and JAX from PyPI
# (docs/frameworks.md), whose maths the shim cannot see: it runs in
# Eigen's and XLA's own kernels.
# - Two runs with real entropy (the framework policy with [rng] pin =
#   none): detdiff's first line names the first differing step and
#   parameter.
# - Under the framework policy: traces that diff clean, and one more
#   optimizer step changes the root and is named.
# - The same for the seams beyond fit and a plain jax.jit: Keras's
#   train_on_batch, a jax.pmap'd step over 2 CPU devices, and a jax.jit'd
#   step with donate_argnums whose state is a NamedTuple as optax keeps it
#   (tests/programs/keras_batch_train.py, jax_seams_train.py).
# - Keras records once per train-function call: with steps_per_execution
#   = 4, every fourth step.
# - JAX with ops on: an op record per jitted call, with its Python line
#   and the counts of the inputs and outputs it had no room for.
# slow: 195
. "$(dirname "$0")/lib.sh"
DETRUN=$TOP/scripts/detrun
KERAS=$TOP/tests/programs/keras_train.py
JAX=$TOP/tests/programs/jax_train.py
export TF_CPP_MIN_LOG_LEVEL=3 KERAS_BACKEND=tensorflow KERAS_HOME=$WORK/keras

# framework LABEL POLICY "PROGRAM [ARGS]" FIRST-LINE: the checks above for
# one framework's seam.
framework() {
    printf 'include = %s\n[rng]\npin = none\n' "$2" > "$WORK/$1-real.policy"
    for run in a b; do
        $DETRUN -p "$WORK/$1-real.policy" -t "$WORK/$1-real-$run" -- "$VENV_PY" $3 \
            > "$WORK/$1-real-$run.out" 2> "$WORK/$1-real-$run.err"
    done
    expect_ne "$1, real entropy: two runs give different weights" \
        "$(cat "$WORK/$1-real-a.out")" "$(cat "$WORK/$1-real-b.out")"
    $DETDIFF "$WORK/$1-real-a" "$WORK/$1-real-b" > "$WORK/$1-real.diff"
    expect_eq "$1, real entropy: detdiff exit" 1 $?
    expect_eq "$1: detdiff's first line names the first differing step and parameter" \
        "$4" "$(head -1 "$WORK/$1-real.diff")"
    $DETRUN -p "$2" -t "$WORK/$1-1" -- "$VENV_PY" $3 > /dev/null 2>&1
    $DETRUN -p "$2" -t "$WORK/$1-2" -- "$VENV_PY" $3 > /dev/null 2>&1
    $DETDIFF "$WORK/$1-1" "$WORK/$1-2" > "$WORK/$1-12.diff" 2>&1
    expect_eq "-p $2, $1: traces diff clean" 0 $?
    $DETRUN -p "$2" -t "$WORK/$1-extra" -- "$VENV_PY" $3 extra > /dev/null 2>&1
    expect_ne "-p $2, $1: one more optimizer step, another root" \
        "$($DETDIFF --root "$WORK/$1-1")" "$($DETDIFF --root "$WORK/$1-extra")"
    $DETDIFF "$WORK/$1-1" "$WORK/$1-extra" > "$WORK/$1-extra.diff"
    expect_grep "-p $2, $1: detdiff names the extra step" \
        "^first differing step: [0-9]+, made by run B only$" "$WORK/$1-extra.diff"
    $DETDIFF --show "$WORK/$1-1" | awk '$2 == "framework.step" && !/ part=/' > "$WORK/$1.steps"
    rm -rf "$WORK/$1-real-a" "$WORK/$1-real-b" "$WORK/$1-1" "$WORK/$1-2" "$WORK/$1-extra"
}

P=$TOP/tests/programs
framework keras tensorflow "$KERAS" "first differing step: 1, parameter sequential/dense/kernel"
framework jax jax "$JAX" "first differing step: 1, parameter params[0][0]"
framework keras-batch tensorflow "$P/keras_batch_train.py" \
    "first differing step: 1, parameter sequential/dense/kernel"
expect_eq "Keras train_on_batch: one step record per call" 4 "$(wc -l < "$WORK/keras-batch.steps")"
framework jax-pmap jax "$P/jax_seams_train.py pmap" \
    "first differing step: 1, parameter params['dense1']['b']"
expect_grep "jax.pmap: every replica's params and state, by pytree path" \
    "framework=jax function=pmap_step step=4 \| params\['dense1'\]\['b'\]:out:64x4:.* state\.trace\['dense2'\]\['w'\]:out:128x4:" \
    "$WORK/jax-pmap.steps"
framework jax-donate jax "$P/jax_seams_train.py donate" \
    "first differing step: 1, parameter params['dense1']['b']"
expect_eq "jax.jit with donate_argnums: one step record per call" 4 \
    "$(wc -l < "$WORK/jax-donate.steps")"

# JAX with ops on: each jitted call is an op record, with its Python line.
DETSHIM_TRACE_OPS=on $DETRUN -p jax -t "$WORK/jax-ops" -- "$VENV_PY" "$JAX" > /dev/null 2>&1
$DETDIFF --show "$WORK/jax-ops" > "$WORK/jax-ops.show"
# Its 21 array inputs and 18 outputs do not fit in 16 operands: the first
# 8 inputs and 8 outputs are kept, and the record says what it left out.
expect_grep "JAX, ops on: a jitted call's op record names its Python line, and what it left out" \
    " framework\.op op=jit\(step\) site=jax_train\.py:[0-9]+ in <module> dropped_in=13 dropped_out=10 \| in0:in:512x4:.* out7:out:" \
    "$WORK/jax-ops.show"
rm -rf "$WORK/jax-ops"

# Keras: one record per train-function call, numbered by the optimizer's
# iterations.
$DETRUN -p tensorflow -t "$WORK/spe" -- "$VENV_PY" -c '
import numpy as np, keras
x = np.ones((64, 4), "float32"); y = np.zeros((64,), "int32")
m = keras.Sequential([keras.Input(shape=(4,)), keras.layers.Dense(2)])
m.compile(optimizer="sgd", loss="sparse_categorical_crossentropy", steps_per_execution=4)
m.fit(x, y, batch_size=8, epochs=1, verbose=0)' > /dev/null 2>&1
steps=$($DETDIFF --show "$WORK/spe" | awk '$2 == "framework.step" && !/ part=/ {
    for (i = 3; i <= NF; i++) if ($i ~ /^step=/) printf "%s ", $i }')
expect_eq "Keras, steps_per_execution = 4: a record every fourth step" "step=4 step=8 " "$steps"
rm -rf "$WORK/spe"
finish
