#!/bin/sh
# Artifacts in the trace (docs/verify.md): the files a run writes that the
# policy's [trace] artifacts globs match, under their final names, and the
# files it reads that [trace] inputs match, each by path, size and
# SHA-256, so the root commits them; and the code it ran with (loaded
# objects by build-id, Python packages by version).
. "$(dirname "$0")/lib.sh"
DETRUN=$TOP/scripts/detrun
ART_PY=$TOP/tests/programs/artifacts_py.py

# run_in DIR ARGS...: a fresh working directory with the data, the program
# traced to DIR/trace.
run_in() {
    dir=$1
    shift
    rm -rf "$dir"
    mkdir -p "$dir/data"
    printf '1,2,3\n4,5,6\n' > "$dir/data/train.csv"
    (cd "$dir" && $DETRUN -p pytorch -t trace -- $PY "$ART_PY" "$@")
}
run_in "$WORK/a"
run_in "$WORK/b"
$DETDIFF --show "$WORK/a/trace" > "$WORK/a.show"
# written_sha DIR PATH: the sha256 the trace of DIR records for PATH.
written_sha() {
    $DETDIFF --show "$1/trace" | sed -n "s/.* artifact\.write path=$2 size=[0-9]* sha256=\([0-9a-f]*\) .*/\1/p"
}
for f in weights.pt last.pt embedding.npy child.ckpt; do
    expect_eq "$f: recorded with the file's own SHA-256" \
        "$(sha256sum "$WORK/a/$f" | cut -d' ' -f1)" "$(written_sha "$WORK/a" "$f")"
done
expect_no_grep "a temporary name never reaches the trace" "weights.pt.tmp|child.part" "$WORK/a.show"
expect_no_grep "a log is no artifact" "train.log" "$WORK/a.show"
expect_eq "a file rewritten every epoch: one record, its last contents" 1 \
    "$(grep -c ' artifact\.write path=last.pt ' "$WORK/a.show")"
expect_eq "an input read twice: one record" 1 \
    "$(grep -c ' artifact\.read path=data/train.csv size=12 sha256=' "$WORK/a.show")"
expect_grep "input recorded relative to the working directory" \
    " artifact\.read path=data/train.csv size=12 sha256=$(sha256sum "$WORK/a/data/train.csv" | cut -d' ' -f1) " \
    "$WORK/a.show"
expect_grep "artifacts in the identity stream" '^  thread 0 \(identity\): ' "$WORK/a.show"
expect_grep "torch's version recorded" ' env\.python package=torch version=' "$WORK/a.show"
expect_grep "numpy's version recorded" ' env\.python package=numpy version=' "$WORK/a.show"
expect_grep "the interpreter's version recorded" ' env\.python package=python version=3\.' "$WORK/a.show"
expect_grep "libtorch named with its build-id" ' env\.object name=libtorch_cpu\.so[^ ]* id=build-id:' "$WORK/a.show"
# The CUDA driver's PTX compiler is mapped only when its disk cache lacks
# the code to compile: left out, a warm cache and a cold one give one root.
mkdir -p "$WORK/jit"
echo 'int ptx_jit_stand_in;' > "$WORK/jit/j.c"
cc -shared -fPIC -o "$WORK/jit/libnvidia-ptxjitcompiler.so.1" "$WORK/jit/j.c"
cc -shared -fPIC -o "$WORK/jit/libother-ondemand.so.1" "$WORK/jit/j.c"
for lib in libnvidia-ptxjitcompiler.so.1 libother-ondemand.so.1; do
    rm -rf "$WORK/jit/t-$lib"
    $DETRUN -p numpy -t "$WORK/jit/t-$lib" -- $PY -c "import ctypes, numpy
ctypes.CDLL('$WORK/jit/$lib')
numpy.ones(8).dot(numpy.ones(8))" > /dev/null 2>&1
    $DETDIFF --show "$WORK/jit/t-$lib" > "$WORK/jit/$lib.show" 2>&1
done
expect_grep "a library loaded late is a loaded object" " env\.object name=libother-ondemand\.so\.1 " \
    "$WORK/jit/libother-ondemand.so.1.show"
expect_no_grep "the driver's PTX compiler is not" "env\.object name=libnvidia-ptxjitcompiler" \
    "$WORK/jit/libnvidia-ptxjitcompiler.so.1.show"
$DETDIFF "$WORK/a/trace" "$WORK/b/trace" > "$WORK/ab.out"
expect_eq "two honest runs: identical traces" 0 $?
expect_eq "the program's files are what it writes without the shim" \
    "$(cd "$WORK/a" && sha256sum weights.pt embedding.npy child.ckpt)" \
    "$(rm -rf "$WORK/plain" && mkdir -p "$WORK/plain/data" && cp "$WORK/a/data/train.csv" "$WORK/plain/data/" &&
       cd "$WORK/plain" && $PY "$ART_PY" && sha256sum weights.pt embedding.npy child.ckpt)"

# A lab that changes the weights after the run: the root no longer matches.
run_in "$WORK/p" poison
expect_ne "post-trained weights: another root" "$($DETDIFF --root "$WORK/a/trace")" \
    "$($DETDIFF --root "$WORK/p/trace")"
$DETDIFF "$WORK/a/trace" "$WORK/p/trace" > "$WORK/ap.out"
expect_eq "post-trained weights: detdiff says diverged" 1 $?
expect_ne "post-trained weights: recorded sha differs" "$(written_sha "$WORK/a" weights.pt)" \
    "$(written_sha "$WORK/p" weights.pt)"
# Poisoned data: the input's digest differs.
run_in "$WORK/d"
printf '1,2,3\n4,5,7\n' > "$WORK/d/data/train.csv"
(cd "$WORK/d" && rm -rf trace && $DETRUN -p pytorch -t trace -- $PY "$ART_PY")
expect_ne "other data: the input's recorded digest differs" \
    "$(grep ' artifact\.read path=data/train.csv' "$WORK/a.show" | sed 's/.*sha256=\([0-9a-f]*\).*/\1/')" \
    "$($DETDIFF --show "$WORK/d/trace" | grep ' artifact\.read path=data/train.csv' | sed 's/.*sha256=\([0-9a-f]*\).*/\1/')"

# C: fopen without fclose is hashed at exit, after exit's flush.
rm -rf "$WORK/c" && mkdir -p "$WORK/c"
(cd "$WORK/c" && $DETRUN -t trace -- $PROGS/artifacts_c)
$DETDIFF --show "$WORK/c/trace" > "$WORK/c.show"
expect_grep "a stream never closed: recorded with its whole contents" \
    " artifact\.write path=stream\.npy size=31 sha256=$(sha256sum "$WORK/c/stream.npy" | cut -d' ' -f1) " "$WORK/c.show"
expect_grep "open, write, close: recorded" \
    " artifact\.write path=raw\.bin size=3 sha256=$(sha256sum "$WORK/c/raw.bin" | cut -d' ' -f1) " "$WORK/c.show"
# dd opens its output, dup2s it onto stdout and closes the first
# descriptor before writing: the file is hashed at exit, whole.
(cd "$WORK/c" && rm -rf dd-trace && $DETRUN -t dd-trace -- dd if=/dev/zero of=zeros.bin bs=1k count=3 status=none)
expect_grep "a file written through a dup2'd descriptor: recorded whole" \
    " artifact\.write path=zeros\.bin size=3072 sha256=$(sha256sum "$WORK/c/zeros.bin" | cut -d' ' -f1) " \
    "$($DETDIFF --show "$WORK/c/dd-trace" > "$WORK/dd.show"; echo "$WORK/dd.show")"
finish
