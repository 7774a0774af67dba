#!/bin/sh
# The cuda family on fake CUDA libraries (tests/fakes/cuda), which vary
# their bits run to run wherever the real ones may: cuBLAS atomics and
# TF32, cuBLASLt split-K reductions, a nondeterministic cuDNN algorithm,
# cuRAND's default ordering; the cuDNN backend offers a nondeterministic
# engine first. gpu_prog (tests/programs/gpu_prog.c) runs one
# call of each, its convolution on tensors whose padding holds bytes that
# differ run to run. Pinned, two runs agree to the bit and their traces
# diff identical, even when the program itself asks for the
# nondeterministic settings; passthrough, they differ and detdiff names the
# call; with another cuBLASLt epilogue bias, detdiff says the inputs
# differ. Device digests are collected asynchronously: the traces equal
# those of digests taken synchronously (DETSHIM_CUDA_DIGEST=sync), nothing
# waits for a stream during the calls, pointer arrays included, and
# records still pending are written at thread exit, exit and exec, never
# by a forked child (gpu_pending).
. "$(dirname "$0")/lib.sh"
P=$PROGS/gpu_prog
G=$PROGS/gpu_pending
unset DETSHIM_POLICY DETSHIM_SEED
all() { sed -n 's/^all //p' "$1"; }

# Without the shim the fakes vary.
$P > "$WORK/bare1.out" && $P > "$WORK/bare2.out"
expect_ne "without the shim, two runs differ" "$(all "$WORK/bare1.out")" "$(all "$WORK/bare2.out")"
$P asks > "$WORK/bare3.out" && $P asks > "$WORK/bare4.out"
expect_ne "without the shim, a program asking for nondeterminism gets it" \
    "$(all "$WORK/bare3.out")" "$(all "$WORK/bare4.out")"
expect_grep "without the shim, the first backend engine is the nondeterministic one" \
    "^backend_engine 7 of 3" "$WORK/bare1.out"

# The default policy pins ([cuda] mode = pinned, tf32 = deny).
DETSHIM_FAKE_CUDA_STATS="$WORK/a.stats" shim "$WORK/a" $P > "$WORK/a.out"
expect_eq "pinned run exits 0" 0 $?
shim "$WORK/b" $P > "$WORK/b.out"
expect_eq "pinned: two runs give the same bits" "$(cat "$WORK/a.out")" "$(cat "$WORK/b.out")"
$DETDIFF "$WORK/a" "$WORK/b" > "$WORK/ab.diff"
expect_eq "pinned: detdiff finds the traces identical" 0 $?
LD_PRELOAD=$SHIM $P > "$WORK/notrace.out"
expect_eq "pinned without a trace: the same bits" "$(cat "$WORK/a.out")" "$(cat "$WORK/notrace.out")"

$DETDIFF --show "$WORK/a" > "$WORK/a.show"
expect_grep "handles are created with atomics not allowed" \
    "cublasCreate_v2 .*cuda.atomics=not_allowed cuda.math_mode=default" "$WORK/a.show"
expect_grep "GEMMs carry the handle's decisions" \
    "cublasSgemm_v2 transa=N transb=N m=32 n=24 k=96 .*C:out:768x4.*cuda.atomics=not_allowed" \
    "$WORK/a.show"
expect_grep "a pointer-array batch is traced, its matrices digested" \
    "cublasSgemmBatched .*m=16 n=8 k=48 .*batch=2 .*A:in:1536x4:.*B:in:768x4:.*C:out:256x4:" "$WORK/a.show"
expect_grep "the Lt heuristic is asked for no reduction scheme" \
    "cublasLtMatmulAlgoGetHeuristic .*returned=1 .*cuda.override=reduction_scheme_mask->none" \
    "$WORK/a.show"
expect_grep "the Lt matmul records its algorithm by its nine config attributes" \
    "cublasLtMatmul .*algo_id=0 splitk=1 reduction_scheme=0 .*algo:in:1x36:.*cuda.algo=id=0 tile=11 stages=31 splitk=1 reduction=0" \
    "$WORK/a.show"
expect_grep "a plain Lt matmul records the default epilogue" \
    "cublasLtMatmul .* transb=0 epilogue=1 workspaceSize=0 " "$WORK/a.show"
expect_grep "the BIAS epilogue is recorded, its bias vector digested as an input" \
    "cublasLtMatmul .* epilogue=4 biasType=0 .* bias:in:32x4:[0-9a-f]+ D:out:768x4:" "$WORK/a.show"
expect_grep "RELU_AUX's bit-mask is digested as an output, 4 bytes for 32 rows per column" \
    "cublasLtMatmul .* epilogue=130 .* D:out:768x4:[0-9a-f]+ aux:out:96x1:[0-9a-f]+ " "$WORK/a.show"
expect_grep "FP8 scales set on FP32 matrices are refused, as cuBLASLt does" \
    "^lt_fp8_scales status 7$" "$WORK/a.out"
expect_grep "and recorded: the scale as an input with its mode, amax of D as an output" \
    "cublasLtMatmul .* a_scale_mode=0 status=7 \| .* a_scale:in:1x4:[0-9a-f]+ D:out:768x4:[0-9a-f]+ amax_d:out:1x4:" \
    "$WORK/a.show"
scale=$(sed -n 's/.* a_scale:in:1x4:\([0-9a-f]*\) .*/\1/p' "$WORK/a.show")
alpha=$(sed -n 's/.*cublasLtMatmul .* alpha:in:1x4:\([0-9a-f]*\) .*/\1/p' "$WORK/a.show" | head -1)
expect_eq "a scale of 1.0 on the device digests as the host alpha 1.0" "$alpha" "$scale"
# The same program with other bias values: another input, which detdiff
# must not take for a nondeterministic matmul.
shim "$WORK/g" $P otherbias > "$WORK/g.out"
expect_ne "another bias gives another D" "$(all "$WORK/a.out")" "$(all "$WORK/g.out")"
$DETDIFF "$WORK/a" "$WORK/g" > "$WORK/ag.diff"
expect_eq "another bias: detdiff exit" 1 $?
expect_grep "another bias: detdiff says the inputs differ" \
    "^  inputs differ: divergence entered earlier, outside intercepted calls" "$WORK/ag.diff"
expect_grep "at the BIAS matmul" "where: thread 0, record 6 \(seq 6\), cublasLtMatmul$" \
    "$WORK/ag.diff"
expect_grep "naming the bias as the input that differs" \
    "^      bias \(in, 32 x 4 bytes\): run A [0-9a-f]+, run B [0-9a-f]+$" "$WORK/ag.diff"
expect_grep "after the plain Lt matmul, which matches" \
    "last matching record: seq 5 cublasLtMatmul .* epilogue=1 " "$WORK/ag.diff"
expect_no_grep "another bias is not called nondeterminism" "nondeterministic" "$WORK/ag.diff"
expect_grep "cuDNN's list keeps only deterministic algorithms" \
    "cudnnFindConvolutionForwardAlgorithm .*offered=3 returned=2 .*cuda.filter=kept 2 of 3" \
    "$WORK/a.show"
expect_grep "FindEx's list is filtered too" "^findex_first 1 of 2" "$WORK/a.out"
expect_grep "without the shim, FindEx offers the nondeterministic algorithm first" \
    "^findex_first 4 of 3" "$WORK/bare1.out"
expect_grep "the convolution records the algorithm it ran" \
    "cudnnConvolutionForward algo=1 .*y:out:512x4.*cuda.algo=1" "$WORK/a.show"
# Tensors are digested through their strides: the padding's garbage, new
# each run, never reaches the trace (the traces diff identical above), and
# each digest is the XXH3-128 of the tensor packed.
conv_digest() { sed -n "s/.*cudnnConvolutionForward .* $1:$2:\([0-9a-f]*\) .*/\1/p" "$3"; }
packed() { sed -n "s/^conv_$1_packed \(........\).*/\1/p" "$2"; }
expect_ne "gpu_prog prints its packed tensors' digests" "" "$(packed x "$WORK/a.out")"
expect_eq "a padded input tensor digests as its packed elements" \
    "$(packed x "$WORK/a.out")" "$(conv_digest x in:600x4 "$WORK/a.show")"
expect_eq "a padded output tensor digests as its packed elements" \
    "$(packed y "$WORK/a.out")" "$(conv_digest y out:512x4 "$WORK/a.show")"
expect_grep "pinned, the backend's engine list holds deterministic engines only" \
    "^backend_engine 3 of 2" "$WORK/a.out"
expect_grep "the engine heuristics' answer is filtered and recorded" \
    "cudnnBackendGetAttribute attribute=CUDNN_ATTR_ENGINEHEUR_RESULTS offered=3 returned=2 .*cuda.algo=engine 3 cuda.filter=kept 2 of 3" \
    "$WORK/a.show"
expect_grep "a backend execution records its engine" \
    "cudnnBackendExecute engine=3 .*cuda.algo=engine 3 \\(deterministic\\)" "$WORK/a.show"
expect_grep "cuRAND generators get LEGACY ordering and a derived seed" \
    "curandCreateGenerator .*cuda.ordering=legacy cuda.seed=[0-9]+" "$WORK/a.show"
expect_grep "the header says how device operands are digested" \
    "device_digest = xxh3-128 (copy-and-hash|by a device kernel)" "$WORK/a.show"
# Same bytes, same digest: GemmEx reads A transposed from the same buffer.
a_sgemm=$(sed -n 's/.*cublasSgemm_v2 .* A:in:3072x4:\([0-9a-f]*\) .*/\1/p' "$WORK/a.show")
a_gemmex=$(sed -n 's/.*cublasGemmEx .* A:in:3072x4:\([0-9a-f]*\) .*/\1/p' "$WORK/a.show")
expect_ne "an A digest is recorded" "" "$a_sgemm"
expect_eq "one buffer read as A and as A transposed digests alike" "$a_sgemm" "$a_gemmex"

# Digests collected asynchronously give the trace of digests taken
# synchronously, byte for byte in every record, and wait for no stream,
# not even for cublasSgemmBatched's three pointer arrays (A, B, C), which
# the digest kernels read on the device; pending records wait for their
# events at exit.
count() { sed -n "s/^$1 //p" "$2"; }
DETSHIM_CUDA_DIGEST=sync DETSHIM_FAKE_CUDA_STATS="$WORK/s.stats" shim "$WORK/s" $P > "$WORK/s.out"
$DETDIFF "$WORK/a" "$WORK/s" > "$WORK/as.diff"
expect_eq "asynchronous and synchronous digests: detdiff finds the traces identical" 0 $?
expect_eq "asynchronous and synchronous digests: the same root" \
    "$($DETDIFF --root "$WORK/s")" "$($DETDIFF --root "$WORK/a")"
# A build without nvcc has no digest kernels: there, and only there, the
# three pointer arrays are read on the host, one wait and one copy each.
arrays=0
grep -q "device_digest = xxh3-128 by a device kernel" "$WORK/a.show" || arrays=3
expect_eq "asynchronously, no stream wait, pointer arrays included where kernels run" \
    $arrays "$(count cuStreamSynchronize "$WORK/a.stats")"
expect_eq "asynchronously, no synchronous copy but those arrays'" \
    $arrays "$(count cuMemcpyDtoH "$WORK/a.stats")"
expect_eq "asynchronously, no context wait" 0 "$(count cuCtxSynchronize "$WORK/a.stats")"
expect_ne "asynchronously, digests complete through events" 0 "$(count cuEventRecord "$WORK/a.stats")"
expect_eq "synchronously, every digest waited for its stream" \
    41 "$(count cuStreamSynchronize "$WORK/s.stats")"
expect_grep "the header says digests are collected asynchronously" \
    "device_digest = .*collected asynchronously" "$WORK/a.show"

# A driver error while queueing a digest: it is taken synchronously
# instead, the trace is unchanged, and the log says so.
FAKE_CUDA_FAIL=cuEventRecord DETSHIM_LOG=info shim "$WORK/x" $P > "$WORK/x.out" 2> "$WORK/x.err"
$DETDIFF "$WORK/x" "$WORK/s" > "$WORK/xs.diff"
expect_eq "a driver error falls back to synchronous digests: the same trace" 0 $?
expect_grep "and the log says so" \
    "^detshim: a device digest was taken synchronously \(a driver error while queueing it\)" \
    "$WORK/x.err"

# Where the digest kernels do not load, the pointer arrays are read on the
# host (one stream wait each), their matrices copied and hashed: the
# same trace, and the log says so.
FAKE_CUDA_FAIL=cuModuleLoadData DETSHIM_LOG=info DETSHIM_FAKE_CUDA_STATS="$WORK/m.stats" \
    shim "$WORK/m" $P > "$WORK/m.out" 2> "$WORK/m.err"
$DETDIFF "$WORK/m" "$WORK/s" > "$WORK/ms.diff"
expect_eq "without digest kernels: the same trace" 0 $?
expect_eq "without digest kernels, the three pointer arrays wait for the stream" \
    3 "$(count cuStreamSynchronize "$WORK/m.stats")"
expect_grep "and the log says why" \
    "^detshim: a device digest was taken synchronously \(a pointer array where no digest kernel" \
    "$WORK/m.err"

# Pending records: with FAKE_CUDA_EVENT_QUERIES huge no event completes
# by polling, so every record is still pending at the point under test.
never() { FAKE_CUDA_EVENT_QUERIES=1000000000 "$@"; }
records() { $DETDIFF --show "$1" | grep -c "cublasSgemm_v2 "; }
for mode in "many 100" "many 300" thread fork exec; do
    n=$(echo "$mode" | tr ' ' _)
    never shim "$WORK/p_$n" $G $mode > "$WORK/p_$n.out"
    DETSHIM_CUDA_DIGEST=sync shim "$WORK/q_$n" $G $mode > "$WORK/q_$n.out"
    $DETDIFF "$WORK/p_$n" "$WORK/q_$n" > "$WORK/pq_$n.diff"
    expect_eq "$mode: pending records are written as synchronous digests write them" 0 $?
done
expect_grep "during the calls, nothing waits for a stream, a context or an event" \
    "^before exit: cuStreamSynchronize 0 cuCtxSynchronize 0 cuEventSynchronize 0$" \
    "$WORK/p_many_100.out"
DETSHIM_FAKE_CUDA_STATS="$WORK/r.stats" shim "$WORK/r_many_100" $G many 100 > "$WORK/r_many_100.out"
# The first call may take two jobs (its operands outgrow a new job's
# pinned memory); later jobs start with room for a whole call.
events=$(count cuEventRecord "$WORK/r.stats")
expect_eq "one event per traced GEMM (A, B and C in, C out share it), not one per operand" \
    "100 or 101" "$(case $events in 100|101) echo "100 or 101" ;; *) echo "$events" ;; esac)"
$DETDIFF "$WORK/p_many_100" "$WORK/r_many_100" > "$WORK/pr.diff"
expect_eq "events completing early or late give the same trace" 0 $?
expect_eq "a full FIFO (256) writes its oldest records first: all 300 are there" \
    300 "$(records "$WORK/p_many_300")"
expect_grep "a full FIFO waits for events, never for the stream" \
    "^before exit: cuStreamSynchronize 0 cuCtxSynchronize 0 cuEventSynchronize [1-9]" \
    "$WORK/p_many_300.out"
$DETDIFF --show "$WORK/p_thread" > "$WORK/p_thread.show"
expect_grep "a thread that exits with pending records writes them" \
    "^ *thread [1-9][0-9]*: 4 records, .*end frame: matches" "$WORK/p_thread.show"
expect_eq "a forked child writes its own record, not its parent's pending ones" \
    1 "$(records "$WORK/p_fork/main.f1.dtrace")"
expect_eq "the parent keeps its pending records" 3 "$(records "$WORK/p_fork/main.dtrace")"
expect_eq "exec writes the old image's pending records first" 2 "$(records "$WORK/p_exec/main.dtrace")"
expect_eq "and the new image records its own" 1 "$(records "$WORK/p_exec/main.e.dtrace")"

# A program that asks for atomics, TF32, a nondeterministic algorithm and
# its own seed gets the pinned behaviour, and the trace shows each override.
shim "$WORK/c" $P asks > "$WORK/c.out"
shim "$WORK/d" $P asks > "$WORK/d.out"
expect_eq "pinned, asking: two runs give the same bits" "$(cat "$WORK/c.out")" "$(cat "$WORK/d.out")"
expect_eq "pinned, asking: the same bits as not asking" "$(cat "$WORK/a.out")" "$(cat "$WORK/c.out")"
$DETDIFF "$WORK/c" "$WORK/d" > "$WORK/cd.diff"
expect_eq "pinned, asking: detdiff finds the traces identical" 0 $?
$DETDIFF --show "$WORK/c" > "$WORK/c.show"
expect_grep "atomics request overridden" \
    "cublasSetAtomicsMode mode=1 .*cuda.atomics=not_allowed cuda.override=atomics_allowed->not_allowed" \
    "$WORK/c.show"
expect_grep "TF32 math request overridden" \
    "cublasSetMathMode mode=3 .*cuda.override=math_tf32_tensor_op->default" "$WORK/c.show"
expect_grep "FAST_TF32 compute type overridden" \
    "cublasGemmEx .*computeType=77 .*cuda.override=compute_type_77->68" "$WORK/c.show"
expect_grep "Get_v7's list is filtered too" \
    "cudnnGetConvolutionForwardAlgorithm_v7 .*returned=2 .*cuda.algo=1 \\(deterministic\\)" \
    "$WORK/c.show"
expect_grep "the program's cuRAND seed is replaced" \
    "curandSetPseudoRandomGeneratorSeed .*cuda.override=seed->pinned seed" "$WORK/c.show"
expect_no_grep "the program's own seed stays out of the trace" "seed=1234" "$WORK/c.show"
expect_grep "cuRAND's normal mean and deviation are part of the record" \
    " curandGenerateNormalDouble n=64 mean=0.5 stddev=2 status=0 " "$WORK/c.show"
expect_grep "cuRAND's Poisson lambda is part of the record" \
    " curandGeneratePoisson n=64 lambda=3.5 status=0 " "$WORK/c.show"
expect_grep "the program's ordering is replaced" \
    "curandSetGeneratorOrdering order=100 .*cuda.override=ordering->legacy" "$WORK/c.show"
expect_grep "curandGenerateSeeds is traced" " curandGenerateSeeds status=0 \| \(no operands\) \| cuda.mode=pinned" \
    "$WORK/c.show"
expect_grep "cuRAND's binomial trials and p are part of the record, its output digested" \
    " curandGenerateBinomial n=64 trials=10 p=0.25 status=0 \| out:out:64x4:[0-9a-f]+ " "$WORK/c.show"
expect_grep "the Method forms record their method" \
    " curandGenerateBinomialMethod n=64 trials=10 p=0.25 method=0 status=0 \| out:out:64x4:" \
    "$WORK/c.show"
binomial() { sed -n 's/.* curandGenerateBinomial .* out:out:64x4:\([0-9a-f]*\) .*/\1/p' "$1"; }
expect_ne "a binomial digest is recorded" "" "$(binomial "$WORK/a.show")"
expect_eq "pinned: the binomial output is the same whatever seed the program asks for" \
    "$(binomial "$WORK/a.show")" "$(binomial "$WORK/c.show")"

# Passthrough: the libraries are untouched, calls only traced.
DETSHIM_POLICY=passthrough shim "$WORK/e" $P > "$WORK/e.out"
DETSHIM_POLICY=passthrough shim "$WORK/f" $P > "$WORK/f.out"
expect_ne "passthrough: two runs differ" "$(all "$WORK/e.out")" "$(all "$WORK/f.out")"
$DETDIFF "$WORK/e" "$WORK/f" > "$WORK/ef.diff"
expect_eq "passthrough: detdiff exit" 1 $?
expect_grep "detdiff classifies the culprit" "nondeterministic operation" "$WORK/ef.diff"
expect_grep "at the split-K Lt matmul" "record 5 \\(seq 5\\), cublasLtMatmul" "$WORK/ef.diff"
expect_grep "whose algorithm the record shows" "algo_id=1 splitk=4 reduction_scheme=1" "$WORK/ef.diff"
$DETDIFF --show "$WORK/e" > "$WORK/e.show"
expect_grep "passthrough records say so" "cuda.mode=passthrough" "$WORK/e.show"
expect_grep "passthrough: the backend runs the nondeterministic engine, and the trace says so" \
    "cudnnBackendExecute engine=7 .*engine 7 \\(nondeterministic\\)" "$WORK/e.show"
expect_no_grep "passthrough overrides nothing" "cuda.override|cuda.filter" "$WORK/e.show"
$DETDIFF --all "$WORK/e" "$WORK/f" | grep -A1 "^  nondeterministic operation" > "$WORK/ef-nondet.txt"
expect_grep "passthrough: the binomial numbers vary too, and detdiff says so" \
    "^    where: .*, curandGenerateBinomial$" "$WORK/ef-nondet.txt"
# scripts/gpu-check.sh runs only where a GPU is lent, rarely: here, with
# none, it builds and links its host digest helper, then says why it
# stops (exit 2).
OUT=$WORK/gpucheck GPU_CHECK_BUILD=no PYTHON=$PY "$TOP/scripts/gpu-check.sh" > "$WORK/gpucheck.out" 2>&1
expect_eq "gpu-check without a GPU: exit 2" 2 $?
expect_grep "gpu-check without a GPU: says why" "^SKIP no usable GPU or no CUDA build of torch" \
    "$WORK/gpucheck.out"
: > "$WORK/empty"
expect_eq "gpu-check's host digest helper links and gives XXH3-128 (of no bytes)" \
    99aa06d3014798d86001c324468d497f "$("$WORK/gpucheck/hostdigest" "$WORK/empty" 2>&1)"
finish
