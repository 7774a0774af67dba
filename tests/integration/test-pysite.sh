#!/bin/sh
# Python call sites (docs/tracing.md#python-call-sites): each intercepted
# call made from Python carries the innermost Python frame of its thread
# (FILE:LINE in FUNCTION, FILE relative to its sys.path entry), shown by
# detdiff and --show beside the native frames; the root does not change
# with the working directory; DETSHIM_PYTHON_SITES=off leaves them out.
. "$(dirname "$0")/lib.sh"
PROG=$TOP/tests/programs/pysite_prog.py
$PY -c 'import numpy' 2> /dev/null || skip "Debian's numpy (python3-numpy) is not installed"
line_of() { grep -n "# SITE:$1\$" "$PROG" | cut -d: -f1; }

# run DIR [ENV=VALUE...] [ARG]: the program from its own folder, traced.
run() {
    dir=$1
    shift
    rm -rf "$dir"
    (cd "$TOP/tests/programs" && env DETSHIM_POLICY=default LD_PRELOAD=$SHIM DETSHIM_TRACE=$dir \
        "$@" > /dev/null)
}
run "$WORK/a" $PY pysite_prog.py
$DETDIFF --show "$WORK/a" > "$WORK/a.txt"
expect_grep "a call from a function names its line" \
    "cblas_dgemm .*\| python pysite_prog.py:$(line_of step) in step\$" "$WORK/a.txt"
expect_grep "a method is named by its qualified name" \
    "\| python pysite_prog.py:$(line_of forward) in Model.forward\$" "$WORK/a.txt"
expect_grep "a thread's call names its own frame" \
    "\| python pysite_prog.py:$(line_of worker) in worker\$" "$WORK/a.txt"
expect_grep "an entropy read names the Python line that asked" \
    "getrandom .*\| python pysite_prog.py:$(line_of urandom) in main\$" "$WORK/a.txt"
expect_grep "a library's frame is relative to dist-packages" \
    "\| python numpy/__init__.py:[0-9]+ in _sanity_check\$" "$WORK/a.txt"
expect_no_grep "numpy's generated dispatch wrapper is stepped over" "array_function" "$WORK/a.txt"
expect_grep "the header says which Python frames are recorded" \
    "^  python_sites = CPython 3.11: " "$WORK/a.txt"

# The script started by its absolute path from elsewhere: the same sites.
mkdir -p "$WORK/elsewhere"
rm -rf "$WORK/b"
(cd "$WORK/elsewhere" && env DETSHIM_POLICY=default LD_PRELOAD=$SHIM DETSHIM_TRACE=$WORK/b \
    $PY "$PROG" > /dev/null)
$DETDIFF "$WORK/a" "$WORK/b" > "$WORK/ab.txt"
expect_eq "from another working directory, by absolute path: identical" 0 $?
expect_eq "... and the same root" "$($DETDIFF --root "$WORK/a")" "$($DETDIFF --root "$WORK/b")"

run "$WORK/nudged" PYSITE_NUDGE=1 $PY pysite_prog.py
$DETDIFF "$WORK/a" "$WORK/nudged" > "$WORK/diff.txt"
expect_eq "a changed input: detdiff says the runs differ" 1 $?
expect_grep "detdiff names the Python line of the first differing call" \
    "python pysite_prog.py:$(line_of step) in step" "$WORK/diff.txt"

run "$WORK/off" DETSHIM_PYTHON_SITES=off $PY pysite_prog.py
$DETDIFF --show "$WORK/off" > "$WORK/off.txt"
expect_no_grep "DETSHIM_PYTHON_SITES=off: no Python frame" "\| python " "$WORK/off.txt"
expect_grep "... and the header says so" "^  python_sites = off: DETSHIM_PYTHON_SITES=off" \
    "$WORK/off.txt"
(cd "$TOP/tests/programs" && env DETSHIM_POLICY=default LD_PRELOAD=$SHIM \
    DETSHIM_TRACE=$WORK/bad DETSHIM_PYTHON_SITES=maybe $PY pysite_prog.py > /dev/null \
    2> "$WORK/bad.err")
expect_eq "a bad DETSHIM_PYTHON_SITES stops the program" 2 $?
expect_grep "... with one line naming it" "^detshim: .*DETSHIM_PYTHON_SITES=maybe is not on or off" \
    "$WORK/bad.err"

# A C program has no interpreter: no Python frame, no header line.
shim "$WORK/c" "$PROGS/blas_prog" > /dev/null 2>&1
$DETDIFF --show "$WORK/c" > "$WORK/c.txt"
expect_no_grep "a C program: no python_sites line" "python_sites" "$WORK/c.txt"

if $PY -c 'import torch' 2> /dev/null; then
    run "$WORK/torch" OMP_NUM_THREADS=1 $PY pysite_prog.py torch
    $DETDIFF --show "$WORK/torch" > "$WORK/torch.txt"
    expect_grep "a torch op (the GIL released) names the Python line" \
        "sgemm_ .*\| python pysite_prog.py:$(line_of torch) in torch_step\$" "$WORK/torch.txt"
else
    skip_check "torch.mm's Python site" "Debian's torch (python3-torch) is not installed"
fi
rm -rf "$WORK"
finish
