#!/bin/sh
# needs: venv
# A third party verifies a published Keras or JAX training with detverify
# (docs/verify.md): the honest release is verified; a release whose weights
# were post-trained after the published run is not, and the verdict names
# the weights file and says the published trace matches the re-run.
# slow: 55
. "$(dirname "$0")/lib.sh"
DETRUN=$TOP/scripts/detrun
DETVERIFY=$TOP/build/detverify
PUBLISH=$TOP/tests/programs/publish_weights.py
[ -x "$VENV_PY" ] || skip "no PyPI venv at build/venv (make deps installs it)"
export TF_CPP_MIN_LOG_LEVEL=3 KERAS_BACKEND=tensorflow KERAS_HOME=$WORK/keras

# check NAME POLICY TRAIN WEIGHTS: a lab publishes pub/ (trace and weights);
# a verifier in a folder of its own verifies it, then a poisoned release.
check() {
    name=$1 policy=$2 train=$TOP/tests/programs/$3 weights=$4
    lab=$WORK/$name-lab
    mkdir -p "$lab"
    (cd "$lab" && $DETRUN -p "$policy" -t pub/trace -- "$VENV_PY" "$PUBLISH" "$train" \
        > /dev/null 2> run.err && mv "$weights" pub/)
    expect_eq "$name: the lab's run wrote its attestation" yes \
        "$([ -f "$lab/pub/trace/attestation.json" ] && echo yes)"
    verifier=$WORK/$name-verifier
    mkdir -p "$verifier"
    cp -r "$lab/pub" "$verifier/"
    (cd "$verifier" && $DETVERIFY pub/trace -- "$VENV_PY" "$PUBLISH" "$train" \
        > honest.out 2> honest.err)
    expect_eq "$name: the honest release is verified" 0 $?
    expect_grep "$name: verified, in plain words" "^verified: " "$verifier/honest.out"
    # The lab post-trains and publishes those weights with the honest trace.
    (cd "$lab" && "$VENV_PY" "$PUBLISH" "$train" poison > /dev/null 2>&1 &&
        cp "$weights" "$verifier/pub/$weights")
    (cd "$verifier" && $DETVERIFY pub/trace -- "$VENV_PY" "$PUBLISH" "$train" \
        > poisoned.out 2> poisoned.err)
    expect_eq "$name: the post-trained release is not verified" 1 $?
    expect_grep "$name: the verdict names the weights file" \
        "^not verified: the published $weights \(sha [0-9a-f]+\) is not what the published workflow produces" \
        "$verifier/poisoned.out"
    expect_grep "$name: and says the published trace matches the re-run" \
        "the published trace matches the re-run, so the published weights were produced outside the published run" \
        "$verifier/poisoned.out"
    rm -rf "$TMPDIR"/detverify.*
}
# detverify re-runs into TMPDIR; a folder of this test's own, so that its
# clean-up never removes another run's re-run folder (concurrent make test).
TMPDIR=$WORK/tmp
export TMPDIR
mkdir -p "$TMPDIR"
check keras tensorflow keras_train.py model.weights.h5
check jax jax jax_train.py params.npz
finish
