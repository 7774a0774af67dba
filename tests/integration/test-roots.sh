#!/bin/sh
# A root binds what can change bits and nothing else (docs/verify.md): the
# same training started as python or python3 (two links to one
# interpreter), through a shell wrapper that execs it, or from another
# working directory has one root; other weights give another.
# slow: 20
. "$(dirname "$0")/lib.sh"
DETRUN=$TOP/scripts/detrun
ART_PY=$TOP/tests/programs/artifacts_py.py
REAL_PY=$(readlink -f $PY)
# detverify re-runs into TMPDIR: a folder of this test's own, so that the
# clean-up below never removes a concurrent run's re-run folder.
TMPDIR=$WORK/tmp
export TMPDIR
mkdir -p "$TMPDIR"

# run_in DIR CMD...: a fresh working directory with the data; CMD traced
# to DIR/trace from inside it. Prints the run's root.
run_in() {
    dir=$1
    shift
    rm -rf "$dir"
    mkdir -p "$dir/data"
    printf '1,2,3\n4,5,6\n' > "$dir/data/train.csv"
    (cd "$dir" && $DETRUN -p pytorch -t trace -- "$@" > /dev/null) && $DETDIFF --root "$dir/trace"
}
ln -sf "$REAL_PY" "$WORK/python"
ln -sf "$REAL_PY" "$WORK/python3"
printf '#!/bin/sh\nexec %s "$@"\n' "$WORK/python3" > "$WORK/train.sh"
chmod +x "$WORK/train.sh"
direct=$(run_in "$WORK/direct" "$WORK/python3" "$ART_PY")
expect_ne "the direct run has a root" "" "$direct"
expect_eq "started as python instead of python3: the same root" "$direct" \
    "$(run_in "$WORK/other-name" "$WORK/python" "$ART_PY")"
expect_eq "through a wrapper that execs python3: the same root" "$direct" \
    "$(run_in "$WORK/wrapper" "$WORK/train.sh" "$ART_PY")"
expect_eq "the wrapper's run: the same process names" "$(cd "$WORK/direct/trace" && echo *)" \
    "$(cd "$WORK/wrapper/trace" && echo *)"
mkdir -p "$WORK/deeper/and/deeper"
expect_eq "from another working directory: the same root" "$direct" \
    "$(run_in "$WORK/deeper/and/deeper/wd" "$WORK/python3" "$ART_PY")"
# The canonical kernels use every CPU allowed ([blas] threads = auto) and
# give the same bits at any count: one CPU (taskset) gives the same root.
cpu=$(taskset -pc $$ 2> /dev/null | sed 's/.*: *//; s/[,-].*//')
if [ -n "$cpu" ] && taskset -c "$cpu" true 2> /dev/null; then
    expect_eq "on one CPU (taskset -c $cpu): the same root" "$direct" \
        "$(run_in "$WORK/one-cpu" taskset -c "$cpu" "$WORK/python3" "$ART_PY")"
else
    skip_check "one CPU, the same root" "taskset cannot pin this process here"
fi
# A verifier may launch the published run another way: detverify agrees.
DETVERIFY=$TOP/build/detverify
(cd "$WORK/wrapper" && rm -rf trace && $DETVERIFY ../direct/trace -- "$WORK/train.sh" "$ART_PY" \
    > verify.out 2> verify.err)
expect_eq "detverify, re-run through the wrapper: verified" 0 $?
(cd "$WORK/other-name" && rm -rf trace && $DETVERIFY ../direct/trace -- "$WORK/python" "$ART_PY" \
    > verify.out 2> verify.err)
expect_eq "detverify, re-run as python: verified" 0 $?
rm -rf "$TMPDIR"/detverify.*
expect_ne "post-trained weights: another root" "$direct" \
    "$(run_in "$WORK/poison" "$WORK/python3" "$ART_PY" poison)"
finish
