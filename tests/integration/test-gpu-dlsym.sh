#!/bin/sh
# CUDA libraries reached through dlsym, as TensorFlow and JAX reach them:
# gpu_dlsym (tests/programs/gpu_dlsym.c) dlopens the fake vendor libraries
# RTLD_LOCAL and fetches every function with dlsym. LD_PRELOAD alone never
# sees those calls: the runs vary and the shim says so at exit. Under
# detrun, the audit module (LD_AUDIT, shim/audit/audit.c) hands the
# program libdetshim's wrappers: the calls are pinned and traced, two runs
# agree to the bit, and a vendor library's own lookups still get the real
# functions.
. "$(dirname "$0")/lib.sh"
P=$PROGS/gpu_dlsym
AUDIT=$TOP/build/libdetshim-audit.so
DETRUN=$TOP/scripts/detrun
unset DETSHIM_POLICY DETSHIM_SEED LD_AUDIT
all() { sed -n 's/^all //p' "$1"; }
show() { "$DETDIFF" --show "$1" > "$1.show"; }

# Without the shim the fakes vary.
$P > "$WORK/bare1.out" && $P > "$WORK/bare2.out"
expect_ne "without the shim, two runs differ" "$(all "$WORK/bare1.out")" "$(all "$WORK/bare2.out")"

# LD_PRELOAD alone: the lookups miss the shim, and it says so at exit.
shim "$WORK/pre" $P > "$WORK/pre1.out" 2> "$WORK/pre1.err"
shim "$WORK/pre2" $P > "$WORK/pre2.out" 2> "$WORK/pre2.err"
expect_grep "LD_PRELOAD alone: the program gets the vendor's function" \
    "^program_gets cublasSgemm_v2 from libcublas.so.13$" "$WORK/pre1.out"
expect_ne "LD_PRELOAD alone: nothing is pinned, two runs differ" \
    "$(all "$WORK/pre1.out")" "$(all "$WORK/pre2.out")"
expect_grep "LD_PRELOAD alone: the shim warns at exit, naming the library and the fix" \
    "^detshim: libcublas.so.13 was loaded but none of its calls reached the shim: .*neither pinned nor traced; run it under detrun, or add LD_AUDIT=$AUDIT$" \
    "$WORK/pre1.err"
expect_lines "LD_PRELOAD alone: one line on stderr" 1 "$WORK/pre1.err"
shim "$WORK/prefork" $P fork > /dev/null 2> "$WORK/prefork.err"
expect_lines "a forked child holding the same libraries does not warn again" 1 "$WORK/prefork.err"

# Under detrun the audit module redirects the program's lookups.
"$DETRUN" -t "$WORK/a" $P > "$WORK/a.out" 2> "$WORK/a.err"
"$DETRUN" -t "$WORK/b" $P > "$WORK/b.out" 2> "$WORK/b.err"
expect_grep "under detrun, the program gets libdetshim's wrapper" \
    "^program_gets cublasSgemm_v2 from libdetshim.so$" "$WORK/a.out"
expect_grep "under detrun, a vendor library's own lookup gets the real function" \
    "^vendor_gets cublasSgemm_v2 from libcublas.so.13$" "$WORK/a.out"
expect_eq "under detrun, two runs agree to the bit" "$(all "$WORK/a.out")" "$(all "$WORK/b.out")"
expect_lines "under detrun, nothing on stderr" 0 "$WORK/a.err"
"$DETDIFF" "$WORK/a" "$WORK/b" > "$WORK/ab.diff"
expect_eq "under detrun, detdiff finds the runs identical" 0 $?
show "$WORK/a"
for call in cublasSgemm_v2 cublasLtMatmul cudnnConvolutionForward curandGenerateUniform; do
    expect_grep "under detrun, $call is traced" "^ +[0-9]+ $call " "$WORK/a.show"
done
expect_grep "under detrun, the program's request for atomics is overridden on record" \
    "cublasSetAtomicsMode .*cuda.override=atomics_allowed->not_allowed" "$WORK/a.show"
expect_grep "the header says the audit module was loaded" \
    "interposition = LD_PRELOAD and LD_AUDIT" "$WORK/a.show"
"$DETDIFF" --show "$WORK/pre" > "$WORK/pre.show" 2>&1
expect_no_grep "LD_PRELOAD alone: no trace of the GPU calls" "cublasSgemm_v2" "$WORK/pre.show"
"$DETDIFF" "$WORK/a" "$WORK/pre" > "$WORK/apre.diff"
expect_eq "detrun against LD_PRELOAD alone: the traces differ" 1 $?
expect_grep "detdiff says first that only run A had the audit module" \
    "^  note: run A had the audit module \(LD_AUDIT\), run B only LD_PRELOAD: CUDA calls looked up with dlsym \(TensorFlow, JAX\) are traced in run A only; run both under detrun$" \
    "$WORK/apre.diff"
"$DETDIFF" --json "$WORK/a" "$WORK/pre" > "$WORK/apre.json"
expect_grep "detdiff --json says it too" '"audit_module_only_in":"a"' "$WORK/apre.json"

# A framework's stub exporting cuBLAS's own names and forwarding to what
# dlsym answers (our wrapper): the wrapper calls cuBLAS, not the stub.
"$DETRUN" -t "$WORK/stub" $P stub > "$WORK/stub.out" 2> "$WORK/stub.err"
expect_eq "through a framework's stub under detrun: the call returns" "stub_create status 0" \
    "$(cat "$WORK/stub.out")"
"$DETDIFF" --show "$WORK/stub" > "$WORK/stub.show" 2>&1
expect_eq "through a framework's stub: traced once, pinned" 1 \
    "$(grep -cE '^ +[0-9]+ cublasCreate_v2 .*cuda\.atomics=not_allowed' "$WORK/stub.show")"

# The header knows of the module even when it is written before main, by
# a call from a constructor (tests/programs/ctor_entropy.c).
"$DETRUN" -t "$WORK/ctor" "$PROGS/ctor_entropy" > /dev/null
"$DETDIFF" --show "$WORK/ctor" > "$WORK/ctor.show"
expect_grep "a header written from a constructor says the audit module was loaded" \
    "interposition = LD_PRELOAD and LD_AUDIT" "$WORK/ctor.show"

# A plain LD_PRELOAD plus LD_AUDIT works as detrun does; a user's own
# audit modules stay, after ours.
LD_AUDIT=$AUDIT shim "$WORK/c" $P > "$WORK/c.out" 2> "$WORK/c.err"
expect_eq "LD_PRELOAD and LD_AUDIT by hand: the same bits as detrun" \
    "$(all "$WORK/a.out")" "$(all "$WORK/c.out")"
"$DETDIFF" "$WORK/a" "$WORK/c" > /dev/null
expect_eq "LD_PRELOAD and LD_AUDIT by hand: the same trace as detrun" 0 $?
LD_AUDIT=$AUDIT "$DETRUN" /bin/sh -c 'echo "$LD_AUDIT"' > "$WORK/env.out" 2>&1
expect_eq "detrun puts its module ahead of the user's LD_AUDIT" "$AUDIT:$AUDIT" "$(cat "$WORK/env.out")"

# Python's ctypes looks functions up with dlsym too (CuPy-style bindings,
# a user's own): under detrun its call reaches the wrapper and is traced.
cat > "$WORK/ctypes_blas.py" <<'PYEOF'
import ctypes, sys
lib = ctypes.CDLL(sys.argv[1] + "/libcublas.so.13", mode=ctypes.RTLD_LOCAL)
handle = ctypes.c_void_p()
print("status", lib.cublasCreate_v2(ctypes.byref(handle)))
PYEOF
"$DETRUN" -t "$WORK/py" $PY "$WORK/ctypes_blas.py" "$FAKES" > "$WORK/py.out" 2> "$WORK/py.err"
expect_eq "ctypes under detrun: the call succeeds" "status 0" "$(cat "$WORK/py.out")"
"$DETDIFF" --show "$WORK/py" > "$WORK/py.show" 2>&1
expect_grep "ctypes under detrun: cublasCreate_v2 is traced, the handle pinned" \
    "^ +[0-9]+ cublasCreate_v2 .*cuda\.atomics=not_allowed" "$WORK/py.show"

# The module without the shim changes nothing.
LD_DEBUG=files LD_AUDIT=$AUDIT $P > "$WORK/noshim.out" 2> "$WORK/noshim.err"
expect_eq "the audit module alone: the program runs" 0 $?
expect_grep "the audit module alone: the loader did load it" \
    "file=$AUDIT \[[0-9]+\]; +generating link map" "$WORK/noshim.err"
expect_grep "the audit module alone: the program gets the vendor's function" \
    "^program_gets cublasSgemm_v2 from libcublas.so.13$" "$WORK/noshim.out"
finish
