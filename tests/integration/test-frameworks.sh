#!/bin/sh
# needs: venv
# The frameworks most users run, from PyPI (build/venv): an unmodified,
# unseeded Keras model on tensorflow-cpu under `detrun -p tensorflow`, and
# an unseeded JAX training under `-p jax`. Plain runs differ; under the
# policy two runs give the same weights and traces that diff clean.
# TensorFlow and JAX compute with their own kernels, not an intercepted
# BLAS, so a variable that changes their results is recorded in the trace
# header even when the policy does not pin it, and detdiff names it.
# slow: 90
. "$(dirname "$0")/lib.sh"
DETRUN=$TOP/scripts/detrun
KERAS=$TOP/tests/programs/keras_train.py
JAX=$TOP/tests/programs/jax_train.py
# Quiet TensorFlow's start-up lines; a Keras home of the test's own.
export TF_CPP_MIN_LOG_LEVEL=3 KERAS_BACKEND=tensorflow KERAS_HOME=$WORK/keras

# weights_of WHAT OUTPUT: the output must be one "weights <hash>" line.
weights_of() {
    case $2 in
    "weights "????????????????????????????????????????????????????????????????) pass ;;
    *) fail "$1 printed '$2', not one weights line" ;;
    esac
}

a=$("$VENV_PY" "$KERAS" 2> "$WORK/k-plain.err")
b=$("$VENV_PY" "$KERAS" 2>> "$WORK/k-plain.err")
weights_of "keras_train.py without the shim" "$a"
expect_ne "keras_train.py without the shim: two runs differ" "$a" "$b"
k1=$($DETRUN -p tensorflow -t "$WORK/k1" -- "$VENV_PY" "$KERAS" 2> "$WORK/k1.err")
k2=$($DETRUN -p tensorflow -t "$WORK/k2" -- "$VENV_PY" "$KERAS" 2> "$WORK/k2.err")
weights_of "keras_train.py under -p tensorflow" "$k1"
expect_eq "-p tensorflow: two runs, same weights" "$k1" "$k2"
$DETDIFF "$WORK/k1" "$WORK/k2" > "$WORK/k12.diff" 2>&1
expect_eq "-p tensorflow: traces diff clean" 0 $?
expect_no_grep "-p tensorflow: no detshim complaint" "^detshim:" "$WORK/k1.err"
# TF_DETERMINISTIC_OPS is on, and the start-up hook's seed is what lets
# the unseeded program run under it.
on=$($DETRUN -p tensorflow -- "$VENV_PY" -c '
import tensorflow as tf
from tensorflow.python.framework import config
print(config.is_op_determinism_enabled(), tf.random.uniform([1]).shape)' 2>&1)
expect_eq "-p tensorflow: op determinism on, and an unseeded random op runs" "True (1,)" "$on"
TF_DETERMINISTIC_OPS=1 "$VENV_PY" "$KERAS" > /dev/null 2> "$WORK/k-noseed.err"
expect_ne "without the hook, TF_DETERMINISTIC_OPS=1 stops the unseeded program" 0 $?

a=$("$VENV_PY" "$JAX")
b=$("$VENV_PY" "$JAX")
weights_of "jax_train.py without the shim" "$a"
expect_ne "jax_train.py without the shim: two runs differ" "$a" "$b"
j1=$($DETRUN -p jax -t "$WORK/j1" -- "$VENV_PY" "$JAX")
j2=$($DETRUN -p jax -t "$WORK/j2" -- "$VENV_PY" "$JAX")
weights_of "jax_train.py under -p jax" "$j1"
expect_eq "-p jax: two runs, same weights" "$j1" "$j2"
$DETDIFF "$WORK/j1" "$WORK/j2" > "$WORK/j12.diff" 2>&1
expect_eq "-p jax: traces diff clean" 0 $?
# A variable the policy leaves to the user, which changes JAX's random
# bits: the weights differ, and detdiff says why before any record.
j3=$(JAX_DEFAULT_PRNG_IMPL=rbg $DETRUN -p jax -t "$WORK/j3" -- "$VENV_PY" "$JAX")
expect_ne "-p jax: JAX_DEFAULT_PRNG_IMPL=rbg changes the weights" "$j1" "$j3"
$DETDIFF "$WORK/j1" "$WORK/j3" > "$WORK/j13.diff" 2>&1
expect_eq "-p jax: a user's unpinned variable: detdiff exit" 1 $?
expect_grep "detdiff names the unpinned variable" \
    'environment differs: JAX_DEFAULT_PRNG_IMPL: run A not set; run B "rbg" set by the user \(the policy does not pin it\)' \
    "$WORK/j13.diff"
finish
