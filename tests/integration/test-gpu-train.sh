#!/bin/sh
# The calls of a PyTorch training step beyond GEMM and convolution
# (gpu_train, tests/programs/gpu_train.c) on the fake CUDA libraries,
# which vary where the real ones may: cuBLAS gemv, dot, dotc, DotEx,
# trsm, trsmBatched, batched getrf/getrs/geqrf/gels and SgemmEx with
# atomics allowed and an SM carveout; cuDNN BatchNorm in the persistent
# mode, an RNN with a clock-seeded dropout, CTC loss with the
# nondeterministic algorithm, the fused convolution with a
# nondeterministic algorithm, a convolution converting FP32 down, max
# pooling. Without the shim every call differs run to run; under the
# pytorch policy the runs agree to the bit and their traces diff
# identical, every override is on record, and each call's record holds
# its shapes and operand digests. cuDNN's spatial transformer sampler
# backward has no deterministic mode: it is named on stderr once and
# detdiff names it as the culprit.
. "$(dirname "$0")/lib.sh"
P=$PROGS/gpu_train
unset DETSHIM_POLICY DETSHIM_SEED CUBLAS_WORKSPACE_CONFIG
CALLS="sgemv sgemv_64 sdot cdotc dotex strsm strsm_batched sgetrf_batched sgetrs_batched
sgeqrf_batched sgels_batched sgemmex bn_forward bn_backward bn_dscale bn_inference rnn_forward
rnn_backward_data rnn_backward_weights rnn_restored ctc ctc_v8 conv_bias_act pool conv_math"
line() { sed -n "s/^$1 //p" "$2"; }

# Three runs: two reordered sums may still round alike, three seldom do.
$P > "$WORK/bare1.out" && $P > "$WORK/bare2.out" && $P > "$WORK/bare3.out"
for c in $CALLS; do
    n=$(for r in 1 2 3; do line $c "$WORK/bare$r.out"; done | sort -u | wc -l)
    expect_ne "without the shim, $c differs run to run" 1 "$n"
done

DETSHIM_POLICY=pytorch shim "$WORK/a" $P > "$WORK/a.out" 2> "$WORK/a.err"
expect_eq "pinned run exits 0" 0 $?
DETSHIM_POLICY=pytorch shim "$WORK/b" $P > "$WORK/b.out" 2> "$WORK/b.err"
for c in $CALLS; do
    expect_eq "pinned, $c repeats to the bit" "$(line $c "$WORK/a.out")" "$(line $c "$WORK/b.out")"
done
$DETDIFF "$WORK/a" "$WORK/b" > "$WORK/ab.diff"
expect_eq "pinned: detdiff finds the traces identical" 0 $?
expect_lines "pinned with the pytorch policy: nothing on stderr" 0 "$WORK/a.err"
DETSHIM_POLICY=pytorch shim "$WORK/n" $P nocarve > "$WORK/n.out"
expect_eq "pinned, the SM carveout is refused: the bits of a run without one" \
    "$(cat "$WORK/n.out")" "$(cat "$WORK/a.out")"
expect_grep "the size queries answer for SPATIAL, not the persistent mode" "^bn_sizes 0 0 0$" \
    "$WORK/a.out"
expect_grep "without the shim, they answer for the persistent mode" "^bn_sizes 256 256 256$" \
    "$WORK/bare1.out"
expect_grep "the CTC workspace queries answer for the deterministic algorithm" \
    "^ctc_sizes 512 512$" "$WORK/a.out"

$DETDIFF --show "$WORK/a" > "$WORK/a.show"
show() { expect_grep "$1" "$2" "$WORK/a.show"; }
show "the header says cuDNN's own cuBLASLt calls are not seen" \
    "interposition = LD_PRELOAD only: .*; cuDNN's engines call cuBLASLt themselves: those GEMMs are not seen"
show "the carveout is refused on record" \
    "cublasSetSmCountTarget smCountTarget=16 .*cuda.override=sm_count_target->unset"
show "gemv records its shape, scalars, matrix and vectors, and the handle" \
    "cublasSgemv_v2 trans=N m=64 n=16 lda=64 incx=1 incy=1 .* A:in:1024x4:[0-9a-f]+ x:in:16x4:[0-9a-f]+ y:in:64x4:[0-9a-f]+ y:out:64x4:[0-9a-f]+ .*cuda.atomics=not_allowed cuda.math_mode=default"
show "the _64 gemv reads x and writes y as op(A) says" \
    "cublasSgemv_v2_64 trans=T m=64 n=16 .* x:in:64x4:[0-9a-f]+ y:in:16x4:[0-9a-f]+ y:out:16x4:"
show "dot records its result" "cublasSdot_v2 n=4096 .* x:in:4096x4:[0-9a-f]+ y:in:4096x4:[0-9a-f]+ result:out:1x4:[0-9a-f]+ .*cuda.atomics=not_allowed"
show "dotc digests complex elements" "cublasCdotc_v2 n=4096 .* x:in:4096x8:[0-9a-f]+ y:in:4096x8:.* result:out:1x8:"
show "DotEx records its types" "cublasDotEx .*yType=0 resultType=0 executionType=0 "
show "trsm records side, triangle and both matrices" \
    "cublasStrsm_v2 type=0 side=L uplo=L trans=N diag=N m=16 n=3 .* A:in:256x4:[0-9a-f]+ B:in:48x4:[0-9a-f]+ B:out:48x4:"
show "trsmBatched digests its pointer arrays" \
    "cublasStrsmBatched .*side=R uplo=U trans=T .*batch=2 .* A:in:512x4:[0-9a-f]+ B:in:96x4:"
show "getrf records the factors, pivots and info" \
    "cublasSgetrfBatched .*n=16 .*batch=2 pivoting=1 .* A:out:512x4:[0-9a-f]+ P:out:32x4:[0-9a-f]+ info:out:2x4:"
show "getrs reads the pivots" "cublasSgetrsBatched .*nrhs=3 .* ipiv:in:32x4:[0-9a-f]+ B:in:96x4:"
show "geqrf writes tau" "cublasSgeqrfBatched .*m=64 n=16 .* tau:out:32x4:"
show "gels writes C and the device info" "cublasSgelsBatched .* C:out:384x4:[0-9a-f]+ devInfo:out:2x4:"
show "SgemmEx is traced as a GEMM" "cublasSgemmEx transa=N transb=N m=64 n=16 k=8 .* C:out:1024x4:"
show "BatchNorm training runs SPATIAL instead of the persistent mode, on record" \
    "cudnnBatchNormalizationForwardTrainingEx mode=2 .* x:in:300x4:[0-9a-f]+ .* y:out:300x4:.*cuda.algo=mode 1 cuda.override=mode spatial_persistent->spatial"
show "BatchNorm backward too, with the parameter gradients" \
    "cudnnBatchNormalizationBackwardEx mode=2 .* dx:out:300x4:[0-9a-f]+ dScale:out:3x4:[0-9a-f]+ dBias:out:3x4:.*cuda.override=mode spatial_persistent->spatial"
show "BatchNorm inference reads the running statistics" \
    "cudnnBatchNormalizationForwardInference mode=1 .* estimatedMean:in:3x4:[0-9a-f]+ estimatedVariance:in:3x4:"
show "the dropout seed is pinned, on record" \
    "cudnnSetDropoutDescriptor dropout=0.300000012 stateSizeInBytes=64 seed=-?[0-9]+ .* states:out:64x1:.*cuda.override=seed->pinned seed"
show "the RNN records its descriptor, shapes and the cuBLAS workspace" \
    "cudnnRNNForward algo=0 cellMode=2 .*hiddenSize=8 projSize=8 numLayers=1 .*maxSeqLength=5 batchSize=3 inputSize_x=6 fwdMode=1 vectorSize_y=8 .* x:in:90x4:[0-9a-f]+ devSeqLengths:in:12x1:[0-9a-f]+ weightSpace:in:480x1:[0-9a-f]+ y:out:120x4:.*cuda.cublas_workspace=:4096:8"
show "backward data" "cudnnRNNBackwardData_v8 .* dy:in:120x4:[0-9a-f]+ .* dx:out:90x4:"
show "backward weights adds to the gradient it reads" \
    "cudnnRNNBackwardWeights_v8 .*addGrad=0 .* dweightSpace:in:480x1:[0-9a-f]+ dweightSpace:out:480x1:"
show "a restored dropout descriptor is traced, not re-seeded" \
    "cudnnRestoreDropoutDescriptor dropout=0.300000012 stateSizeInBytes=64 status=0 \| \(no operands\) \| cuda.mode=pinned \|"
show "CTC runs the deterministic algorithm, on record" \
    "cudnnCTCLoss algo=1 workspaceSize=512 .* labels:in:16x4:[0-9a-f]+ .* costs:out:8x4:[0-9a-f]+ gradients:out:2560x4:.*cuda.algo=0 \(deterministic\) cuda.override=algo 1->0"
show "and in its v8 form" "cudnnCTCLoss_v8 algo=1 .*cuda.override=algo 1->0"
show "the fused convolution's algorithm is pinned as the forward's" \
    "cudnnConvolutionBiasActivationForward algo=4 .* z:in:512x4:[0-9a-f]+ bias:in:4x4:[0-9a-f]+ y:out:512x4:.*cuda.algo=1 cuda.override=algo 4->1"
show "pooling is traced" "cudnnPoolingForward .* x:in:512x4:[0-9a-f]+ y:out:128x4:"
show "a math type converting FP32 down is lowered under tf32 = deny" \
    "cudnnSetConvolutionMathType mathType=2 .*cuda.override=math tensor_op_allow_conversion->tensor_op"

# A cuDNN that refuses SPATIAL for a tensor: the persistent mode the
# program asked for runs, since its buffers fit, and the shim says so.
FAKE_CUDNN_BN_NO_SPATIAL=1 DETSHIM_POLICY=pytorch shim "$WORK/f" $P > "$WORK/f.out" 2> "$WORK/f.err"
expect_eq "SPATIAL refused: the program still runs" 0 $?
expect_grep "SPATIAL refused: said once on stderr" \
    "^detshim: cuDNN refused BatchNorm in SPATIAL mode for a tensor \(status 3000\): it runs in the persistent mode the program asked for, unpinned$" \
    "$WORK/f.err"
expect_lines "once for forward and backward" 1 "$WORK/f.err"
$DETDIFF --show "$WORK/f" > "$WORK/f.show"
expect_grep "SPATIAL refused: the record says the call is not pinned" \
    "cudnnBatchNormalizationBackwardEx mode=2 .*cuda.algo=mode 2 cuda.override=not pinned: cuDNN refused SPATIAL here" \
    "$WORK/f.show"

# The default policy leaves CUBLAS_WORKSPACE_CONFIG unset: the RNN says so.
shim "$WORK/d" $P > /dev/null 2> "$WORK/d.err"
expect_grep "without a single cuBLAS workspace size, the RNN is named on stderr" \
    "^detshim: cuDNN RNNs call cuBLAS inside, which is deterministic only with one workspace size: set \[cuda\] cublas_workspace = :4096:8 in the policy \(CUBLAS_WORKSPACE_CONFIG is unset\)$" \
    "$WORK/d.err"
expect_lines "once, though the program makes four RNN calls" 1 "$WORK/d.err"
LD_PRELOAD=$SHIM $P > /dev/null 2> "$WORK/dn.err"
expect_eq "without a trace, the same line" "$(cat "$WORK/d.err")" "$(cat "$WORK/dn.err")"
$DETDIFF --show "$WORK/d" > "$WORK/d.show"
expect_grep "and its records say why" "cudnnRNNForward .*cuda.cublas_workspace=unset" "$WORK/d.show"

printf '[cuda]\nmode = passthrough\n' > "$WORK/pass.policy"
DETSHIM_POLICY=$WORK/pass.policy shim "$WORK/p1" $P > "$WORK/p1.out"
DETSHIM_POLICY=$WORK/pass.policy shim "$WORK/p2" $P > "$WORK/p2.out"
expect_ne "passthrough: the runs differ" "$(line all "$WORK/p1.out")" "$(line all "$WORK/p2.out")"
$DETDIFF "$WORK/p1" "$WORK/p2" > "$WORK/p.diff"
expect_eq "passthrough: detdiff exit" 1 $?
expect_grep "passthrough: detdiff names the first call that varied" \
    "where: thread 0, record 3 \(seq 3\), cublasSgemv_v2$" "$WORK/p.diff"

# grid_sample's backward: no deterministic mode to pin.
DETSHIM_POLICY=pytorch shim "$WORK/s1" $P sampler > "$WORK/s1.out" 2> "$WORK/s1.err"
DETSHIM_POLICY=pytorch shim "$WORK/s2" $P sampler > "$WORK/s2.out" 2> /dev/null
expect_grep "the sampler backward is named on stderr" \
    "^detshim: cudnnSpatialTfSamplerBackward \(grid_sample's backward\) sums with atomics and cuDNN has no deterministic mode for it: its results are not pinned$" \
    "$WORK/s1.err"
expect_lines "once" 1 "$WORK/s1.err"
for c in grid_forward sampler_forward; do
    expect_eq "pinned, $c repeats" "$(line $c "$WORK/s1.out")" "$(line $c "$WORK/s2.out")"
done
expect_ne "the sampler backward still varies" "$(line sampler_backward "$WORK/s1.out")" \
    "$(line sampler_backward "$WORK/s2.out")"
$DETDIFF "$WORK/s1" "$WORK/s2" > "$WORK/s.diff"
expect_grep "detdiff names it as the nondeterministic operation" \
    "where: thread 0, record 2 \(seq 2\), cudnnSpatialTfSamplerBackward$" "$WORK/s.diff"
$DETDIFF --show "$WORK/s1" > "$WORK/s1.show"
expect_grep "its record says why it is not pinned" \
    "cudnnSpatialTfSamplerBackward .* dx:out:384x4:[0-9a-f]+ dgrid:out:144x4:.*cuda.nondeterministic=atomics; cuDNN has no deterministic mode" \
    "$WORK/s1.show"
expect_grep "the grid generator's operands are sized from its descriptor" \
    "cudnnSpatialTfGridGeneratorForward n=2 h=6 w=6 .* theta:in:12x4:[0-9a-f]+ grid:out:144x4:" \
    "$WORK/s1.show"
finish
