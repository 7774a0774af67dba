#!/bin/sh
# detshim's benchmarks, run by `make bench` after it has built the shim and
# build/bench/*; runnable by hand from anywhere as scripts/bench.sh. Each
# number is measured side by side with the same work without the shim, in
# this one run, and reported; nothing here asserts a timing. It does fail
# if the shim did not really intercept (an empty trace), because then the
# numbers would mean nothing. The training ratio is also estimated from the
# per-record cost and digest speed measured here, because wall times on a
# shared machine swing by more than the overhead. About 5 minutes on 2 cores.
# Knobs (environment): BENCH_DDOT_CALLS (2000000), BENCH_DDOT_TRACED_CALLS
# (50000: every traced call writes a ~250-byte record), BENCH_TORCH_ARGS
# ("300 1024": steps and hidden width of tests/programs/torch_prog.py),
# BENCH_DIFF_RECORDS (1000000: records per trace of the detdiff section,
# ~250 bytes each, two traces written under build/ and deleted after),
# BENCH_DIFF_THREADS (4096: threads per trace of its pairing measure),
# BENCH_DIFF_BASELINE (unset: the path of another detdiff, e.g. an older
# build, measured side by side on the same traces), BENCH_SUMMARY_CALLS
# (100000000: calls of the summary-trace loop, cblas_ddot n=1, its trace
# bounded by max_bytes = 64M and deleted after), BENCH_SUMMARY_TORCH_STEPS
# (6000: steps of the long summary-traced training, ~1 minute here),
# BENCH_L3_SIZES ("512 1024 2048": n of the level-3 section,
# bench_canonical_l3; about a minute and a half at 2048), BENCH_L3_REPS (3) and
# BENCH_L3_ONLY ("strsm RL,dsyrk L": only those cells; unset: all 29 per n).
set -eu
cd "$(dirname "$0")/.."
TOP=$(pwd)
SHIM=$TOP/build/libdetshim.so
DETDIFF=$TOP/build/detdiff
OVERHEAD=$TOP/build/bench/bench_overhead
DIGEST=$TOP/build/bench/bench_digest
GETRANDOM=$TOP/build/bench/bench_getrandom
CANON_GEMM=$TOP/build/bench/bench_canonical
CANON_BLAS=$TOP/build/bench/bench_canonical_blas
CANON_L3=$TOP/build/bench/bench_canonical_l3
CUBLAS=$TOP/build/bench/bench_cublas
NCCL=$TOP/build/bench/bench_nccl
PY=/usr/bin/python3
TORCH_PROG=$TOP/tests/programs/torch_prog.py
DDOT_CALLS=${BENCH_DDOT_CALLS:-2000000}
DDOT_TRACED_CALLS=${BENCH_DDOT_TRACED_CALLS:-50000}
TORCH_ARGS=${BENCH_TORCH_ARGS:-300 1024}
DIFF_RECORDS=${BENCH_DIFF_RECORDS:-1000000}
DIFF_THREADS=${BENCH_DIFF_THREADS:-4096}
DIFF_BASELINE=${BENCH_DIFF_BASELINE:-}
SUMMARY_CALLS=${BENCH_SUMMARY_CALLS:-100000000}
LONG_STEPS=${BENCH_SUMMARY_TORCH_STEPS:-6000}
TRACE_CALLS=$TOP/build/bench/bench_trace_calls

die() {
    echo "bench: $*" >&2
    exit 1
}
for f in "$SHIM" "$DETDIFF" "$OVERHEAD" "$DIGEST" "$GETRANDOM" "$CANON_GEMM" "$CANON_BLAS" "$CANON_L3" \
    "$CUBLAS" "$TRACE_CALLS" "$NCCL"; do
    [ -f "$f" ] || die "missing $f: run 'make bench'"
done
unset DETSHIM_TRACE LD_PRELOAD
# The overhead and training numbers measure interception and tracing, so
# the vendor BLAS runs in both columns (passthrough); the canonical kernels
# are compared with OpenBLAS in their own section. The benchmark programs
# that link the shim's objects find the policy by path.
export DETSHIM_POLICY=passthrough
POLICY_FILE=$TOP/policies/default.policy
WORK=$(mktemp -d "${TMPDIR:-/tmp}/detshim-bench.XXXXXX")
# The detdiff section's traces are large (BENCH_DIFF_RECORDS x ~250 bytes,
# twice): under build/, not a tmpfs, and removed however the script ends.
DIFF_WORK=$TOP/build/bench-diff.$$
trap 'rm -rf "$WORK" "$DIFF_WORK"' EXIT INT TERM

# records DIR: how many call and entropy records a trace directory holds,
# over all threads (the identity streams' loaded-code records left out).
records() {
    "$DETDIFF" --show "$1" |
        awk '$1 == "thread" && !/\(identity\)|\(real entropy/ {
                 for (i = 3; i <= NF; i++) if ($i == "records," || $i == "record,") n += $(i - 1) }
             END { print n + 0 }'
}
# ns_per_call LINE: the number before "ns/call" in bench_overhead's output.
ns_per_call() {
    echo "$1" | awk '{ for (i = 2; i <= NF; i++) if ($i == "ns/call") print $(i - 1) }'
}
# ratio A B: A / B to two decimals.
ratio() {
    awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'
}
now_ns() {
    date +%s%N
}
# seconds_of CMD...: runs CMD (output discarded) and prints its wall time.
seconds_of() {
    t0=$(now_ns)
    "$@" > /dev/null || die "failed: $*"
    t1=$(now_ns)
    awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", (b - a) / 1e9 }'
}
min() {
    awk -v a="$1" -v b="$2" 'BEGIN { print (a == "" || b < a) ? b : a }'
}

echo "detshim benchmarks on $(nproc) CPU(s), $(uname -m), $(date -u +%Y-%m-%dT%H:%MZ)"
echo

# The traced loops run twice, the trace of the first deleted: a traced
# call writes some 250 bytes, and on a VM the first writes into page
# cache the guest has not touched yet run several times slower than
# later ones (docs/benchmarks.md). Both runs are reported: the first is
# what a fresh machine's first traced job pays, the second the steady
# state of a long one.
echo "== Per-call overhead: cblas_ddot, n=16 (best of 5 runs of each loop)"
plain=$("$OVERHEAD" "$DDOT_CALLS" 5)
notrace=$(LD_PRELOAD=$SHIM "$OVERHEAD" "$DDOT_CALLS" 5)
first=$(LD_PRELOAD=$SHIM DETSHIM_TRACE=$WORK/ddot "$OVERHEAD" "$DDOT_TRACED_CALLS" 5)
rm -rf "$WORK/ddot"
traced=$(LD_PRELOAD=$SHIM DETSHIM_TRACE=$WORK/ddot "$OVERHEAD" "$DDOT_TRACED_CALLS" 5)
n=$(records "$WORK/ddot")
[ "$n" -eq $((DDOT_TRACED_CALLS * 5)) ] ||
    die "traced ddot run wrote $n records, expected $((DDOT_TRACED_CALLS * 5)): calls not intercepted?"
p=$(ns_per_call "$plain")
u=$(ns_per_call "$notrace")
f=$(ns_per_call "$first")
t=$(ns_per_call "$traced")
ddot_row() { # LABEL NS: a row against the plain loop
    printf '  %-36s %10s %10s %10s\n' "$1" "$2" "$(ratio "$2" "$p")" \
        "$(awk -v a="$2" -v b="$p" 'BEGIN { printf "%.1f", a - b }')"
}
printf '  %-36s %10s %10s %10s\n' "" "ns/call" "vs plain" "+ns/call"
printf '  %-36s %10s %10s %10s\n' "without the shim" "$p" "1.00" "-"
ddot_row "LD_PRELOAD, no trace" "$u"
ddot_row "LD_PRELOAD + DETSHIM_TRACE, 1st run" "$f"
ddot_row "LD_PRELOAD + DETSHIM_TRACE, 2nd run" "$t"
echo "  ($DDOT_CALLS calls a loop untraced, $DDOT_TRACED_CALLS traced: $n records," \
    "$(du -sh "$WORK/ddot" | cut -f1) of trace a run)"
rm -rf "$WORK/ddot"
echo

echo "== Per-call overhead on the fake cuBLAS: cublasSgemm_v2, 8x8x8 (best of 5 runs of each loop)"
# The shim's CPU time per GEMM: pinning checks, and, traced, the record and
# the queued digests of 5 operands. No real driver or GPU is involved.
# Plain and untraced alternate, three runs each, keeping the best: the
# difference is tens of ns and one run can be slowed by the machine.
plain=""
notrace=""
for i in 1 2 3; do
    plain=$(min "$plain" "$(ns_per_call "$("$CUBLAS" 100000 5)")")
    notrace=$(min "$notrace" "$(ns_per_call "$(LD_PRELOAD=$SHIM "$CUBLAS" 100000 5)")")
done
first=$(ns_per_call "$(LD_PRELOAD=$SHIM DETSHIM_TRACE=$WORK/cublas "$CUBLAS" 20000 5)")
rm -rf "$WORK/cublas"
traced=$(ns_per_call "$(LD_PRELOAD=$SHIM DETSHIM_TRACE=$WORK/cublas "$CUBLAS" 20000 5)")
n=$(records "$WORK/cublas")
[ "$n" -eq 100001 ] || die "traced cublas run wrote $n records, expected 100001: not intercepted?"
cublas_row() { # LABEL NS: a row against the fake alone
    printf '  %-36s %10s %10s\n' "$1" "$2" \
        "$(awk -v a="$2" -v b="$plain" 'BEGIN { printf "%.1f", a - b }')"
}
printf '  %-36s %10s %10s\n' "" "ns/call" "+ns/call"
printf '  %-36s %10s %10s\n' "fake cuBLAS alone" "$plain" "-"
cublas_row "LD_PRELOAD, no trace" "$notrace"
cublas_row "LD_PRELOAD + DETSHIM_TRACE, 1st run" "$first"
cublas_row "LD_PRELOAD + DETSHIM_TRACE, 2nd run" "$traced"
rm -rf "$WORK/cublas"
echo

echo "== All-reduce on the fake NCCL: float32 sum, 2 ranks (processes), pinned vs canonical"
# Pinned is -p pytorch (Ring, Simple, 4 channels pinned); canonical the
# same with [nccl] mode = canonical: ncclAllGather of 4 MiB rounds and an
# ascending-rank sum on the host (docs/collectives.md). The fake reduces
# with scalar C on the host, so its own column is no model of a GPU: read
# the canonical column against it only as the shim's extra work here.
printf 'include = pytorch\n[nccl]\nmode = canonical\n' > "$WORK/canonical.policy"
ms() { "$@" | awk '{ for (i = 1; i <= NF; i++) if ($i == "ms/call") print $(i - 1) }'; }
printf '  %-10s %12s %12s %12s %12s %10s\n' "" "fake alone" "pinned" "pinned+trace" "canonical" \
    "canon/pin"
for spec in "1048576 20 1 MiB" "67108864 2 64 MiB"; do
    set -- $spec
    bare=$(ms "$NCCL" 2 "$1" "$2")
    pin=$(ms env LD_PRELOAD="$SHIM" DETSHIM_POLICY=pytorch "$NCCL" 2 "$1" "$2")
    traced=$(ms env LD_PRELOAD="$SHIM" DETSHIM_POLICY=pytorch DETSHIM_TRACE="$WORK/nccl" \
        "$NCCL" 2 "$1" "$2")
    [ -f "$WORK/nccl/rank0.dtrace" ] || die "traced NCCL run wrote no rank0 trace: not intercepted?"
    rm -rf "$WORK/nccl"
    canon=$(ms env LD_PRELOAD="$SHIM" DETSHIM_POLICY="$WORK/canonical.policy" "$NCCL" 2 "$1" "$2")
    printf '  %-10s %12s %12s %12s %12s %10s\n' "$3 $4" "$bare ms" "$pin ms" "$traced ms" \
        "$canon ms" "$(ratio "$canon" "$pin")"
done
echo

echo "== Pinned randomness: getrandom of 32 bytes (best of 5 runs of each loop)"
plain=$(ns_per_call "$("$GETRANDOM" 200000 5)")
pinned=$(ns_per_call "$(LD_PRELOAD=$SHIM "$GETRANDOM" 200000 5)")
traced=$(ns_per_call "$(LD_PRELOAD=$SHIM DETSHIM_TRACE=$WORK/rng "$GETRANDOM" 20000 5)")
n=$(records "$WORK/rng")
[ "$n" -eq 100000 ] || die "traced getrandom run wrote $n records, expected 100000: not intercepted?"
printf '  %-36s %10s %10s\n' "" "ns/call" "vs real"
printf '  %-36s %10s %10s\n' "real getrandom (no shim)" "$plain" "1.00"
printf '  %-36s %10s %10s\n' "pinned (LD_PRELOAD)" "$pinned" "$(ratio "$pinned" "$plain")"
printf '  %-36s %10s %10s\n' "pinned + DETSHIM_TRACE" "$traced" "$(ratio "$traced" "$plain")"
rm -rf "$WORK/rng"
echo

echo "== Python call sites: np.dot of two 16-vectors (cblas_ddot) from a Python loop, traced (thread CPU time)"
# The same traced loop with and without the Python frame of each record
# (DETSHIM_PYTHON_SITES=off), alternating three runs each, keeping the best.
PYSITE=$TOP/tests/bench/bench_pysite.py
if "$PY" -c 'import numpy' 2> /dev/null; then
    py_on=""
    py_off=""
    for i in 1 2 3; do
        rm -rf "$WORK/py"
        py_on=$(min "$py_on" "$(ns_per_call "$(LD_PRELOAD=$SHIM DETSHIM_TRACE=$WORK/py \
            "$PY" "$PYSITE" 20000 5)")")
        n=$(records "$WORK/py")
        [ "$n" -ge 100000 ] || die "traced np.dot run wrote $n records: calls not intercepted?"
        "$DETDIFF" --show "$WORK/py" | grep -q '| python bench_pysite.py:' ||
            die "the traced np.dot records carry no Python call site"
        rm -rf "$WORK/py"
        py_off=$(min "$py_off" "$(ns_per_call "$(LD_PRELOAD=$SHIM DETSHIM_TRACE=$WORK/py \
            DETSHIM_PYTHON_SITES=off "$PY" "$PYSITE" 20000 5)")")
    done
    rm -rf "$WORK/py"
    printf '  %-36s %10s\n' "" "ns/call"
    printf '  %-36s %10s\n' "traced, DETSHIM_PYTHON_SITES=off" "$py_off"
    printf '  %-36s %10s\n' "traced, with Python call sites" "$py_on"
    echo "  difference $(awk -v a="$py_on" -v b="$py_off" 'BEGIN { printf "%.1f", a - b }') ns/call" \
        "(a Python loop's time varies by more than this from run to run)"
else
    echo "  skipped: Debian's numpy (python3-numpy) is not installed"
fi
echo

echo "== Canonical BLAS vs OpenBLAS, side by side in one process (default policy's kernels)"
DETSHIM_POLICY=$POLICY_FILE "$CANON_GEMM" "${BENCH_CANON_ROUNDS:-3}" | sed 's/^/  /'
echo
DETSHIM_POLICY=$POLICY_FILE "$CANON_BLAS" "${BENCH_CANON_BLAS_REPS:-5}" | sed 's/^/  /'
echo
echo "   level 3 other than gemm, every side and uplo of trmm and trsm (load average: $(cut -d' ' -f1-3 /proc/loadavg))"
# shellcheck disable=SC2086 # the sizes are separate words on purpose
DETSHIM_POLICY=$POLICY_FILE "$CANON_L3" "${BENCH_L3_REPS:-3}" ${BENCH_L3_SIZES:-512 1024 2048} |
    sed 's/^/  /'
echo

echo "== Digest throughput on a 64 MiB buffer (XXH3-128 is the shim's; SHA-256 for comparison)"
digest_out=$(DETSHIM_POLICY=$POLICY_FILE "$DIGEST" 7)
echo "$digest_out" | sed 's/^/  /'
xxh_gbps=$(echo "$digest_out" | awk '/digest_bytes, contiguous/ { print $(NF - 1) }')
read_gbps=$(echo "$digest_out" | awk '/memory read/ { print $(NF - 1) }')
echo "  (digest_bytes from memory runs at $(ratio "$xxh_gbps" "$read_gbps") of a plain read of the same" \
    "buffer; load average $(cut -d' ' -f1-3 /proc/loadavg))"
echo

echo "== Training: tests/programs/torch_prog.py $TORCH_ARGS (seeded PyTorch CPU MLP)"
echo "   wall time, 5 back-to-back pairs: plain, traced, plain, traced, ..."
echo "   (one BLAS thread: a run that shares no core with itself varies less on a busy machine)"
# Exported for the training runs only, so the ddot loops above are as before.
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
best_plain=""
best_traced=""
pair_ratios=""
# shellcheck disable=SC2086 # TORCH_ARGS is two words on purpose
for i in 1 2 3 4 5; do
    sp=$(seconds_of "$PY" "$TORCH_PROG" $TORCH_ARGS)
    best_plain=$(min "$best_plain" "$sp")
    rm -rf "$WORK/torch"
    st=$(seconds_of env LD_PRELOAD="$SHIM" DETSHIM_TRACE="$WORK/torch" "$PY" "$TORCH_PROG" $TORCH_ARGS)
    best_traced=$(min "$best_traced" "$st")
    pair_ratios="$pair_ratios $(ratio "$st" "$sp")"
    echo "   pair $i: plain ${sp} s, traced ${st} s, ratio $(ratio "$st" "$sp")"
done
# On a shared machine one slow run skews best-of; the median of the
# back-to-back pairs is the steadier figure.
median_ratio=$(echo $pair_ratios | tr ' ' '\n' | sort -n | sed -n 3p)
n=$(records "$WORK/torch")
[ "$n" -gt 0 ] || die "traced training wrote no records: calls not intercepted?"
# Bytes digested: every operand shows as name:role:COUNTxSIZE:digest.
digested=$("$DETDIFF" --show "$WORK/torch" | awk '{
    for (i = 1; i <= NF; i++)
        if ($i ~ /^[A-Za-z0-9_]+:[a-z]+:[0-9]+x[0-9]+:[0-9a-f]+$/) {
            split($i, f, ":"); split(f[3], c, "x"); b += c[1] * c[2]
        }
} END { printf "%.0f", b }')
printf '  %-36s %10s\n' "" "seconds"
printf '  %-36s %10s\n' "without the shim" "$best_plain"
printf '  %-36s %10s\n' "LD_PRELOAD + DETSHIM_TRACE" "$best_traced"
echo "  ratio traced / plain: best-of $(ratio "$best_traced" "$best_plain")," \
    "median of pairs $median_ratio (goal: at most 1.05, issue 15; trace: $n records, $(du -sh "$WORK/torch" | cut -f1))"
# The shim's work in the traced run, from the per-record cost and digest
# speed measured above: steadier than the wall-time ratio.
awk -v n="$n" -v per="$(awk -v a="$t" -v b="$u" 'BEGIN { print a - b }')" -v bytes="$digested" \
    -v gbps="$xxh_gbps" -v plain="$best_plain" 'BEGIN {
    s = n * per / 1e9 + bytes / (gbps * 1e9)
    printf "  cross-check: %d records x %.2f us + %.2f GB digested at %.1f GB/s = %.2f s of shim work\n",
        n, per / 1e3, bytes / 1e9, gbps, s
    printf "  (%.1f%% of the plain run; estimated ratio %.2f)\n", 100 * s / plain, 1 + s / plain
}'
rm -rf "$WORK/torch"
echo

echo "== Summary traces ([trace] level = summary): bytes per call, the root against a full trace"
# bytes_per_call DIR CALLS: the trace directory's .dtrace bytes over CALLS.
bytes_per_call() {
    awk -v b="$(cat "$1"/*.dtrace | wc -c)" -v n="$2" 'BEGIN { printf "%.4f", b / n }'
}
# window_bytes DIR: bytes of the WINDOW frames (60 each) of a summary trace;
# the rest is the part that does not grow with the calls (the header, the
# identity stream's files and loaded code, one SITE frame per call site).
window_bytes() {
    "$DETDIFF" --show "$1" | awk '$1 == "summary:" { w += $5 } END { print w * 60 }'
}
# shellcheck disable=SC2086 # TORCH_ARGS is two words on purpose
env LD_PRELOAD="$SHIM" DETSHIM_TRACE="$WORK/tfull" "$PY" "$TORCH_PROG" $TORCH_ARGS > /dev/null
# shellcheck disable=SC2086
env LD_PRELOAD="$SHIM" DETSHIM_TRACE_LEVEL=summary DETSHIM_TRACE="$WORK/tsum" "$PY" "$TORCH_PROG" \
    $TORCH_ARGS > /dev/null
# shellcheck disable=SC2086
env LD_PRELOAD="$SHIM" DETSHIM_TRACE_COMPRESS=zstd DETSHIM_TRACE="$WORK/tzstd" "$PY" "$TORCH_PROG" \
    $TORCH_ARGS > /dev/null
calls=$(records "$WORK/tfull")
[ "$("$DETDIFF" --root "$WORK/tfull")" = "$("$DETDIFF" --root "$WORK/tsum")" ] ||
    die "the training's summary trace has another root than its full trace"
[ "$("$DETDIFF" --root "$WORK/tfull")" = "$("$DETDIFF" --root "$WORK/tzstd")" ] ||
    die "the training's compressed trace has another root than its full trace"
printf '  %-44s %12s %12s %14s\n' "" "calls" "bytes/call" "same root"
printf '  %-44s %12s %12s %14s\n' "training ($TORCH_ARGS), full" "$calls" \
    "$(bytes_per_call "$WORK/tfull" "$calls")" "-"
printf '  %-44s %12s %12s %14s\n' "training ($TORCH_ARGS), full, zstd" "$calls" \
    "$(bytes_per_call "$WORK/tzstd" "$calls")" "yes"
rm -rf "$WORK/tzstd"
printf '  %-44s %12s %12s %14s\n' "training ($TORCH_ARGS), summary" "$calls" \
    "$(bytes_per_call "$WORK/tsum" "$calls")" "yes"
wb=$(window_bytes "$WORK/tsum")
echo "  (the summary: $wb bytes of window digests, $(awk -v w="$wb" -v n="$calls" \
    'BEGIN { printf "%.4f", w / n }') per call; $(( $(cat "$WORK"/tsum/*.dtrace | wc -c) - wb ))" \
    "bytes that do not grow with the calls: header, identity stream, call sites)"
# The same training, longer: the part that does not grow is paid once, so
# a short run's bytes per call say little of a real one's. All-in at the
# longer length, and the marginal bytes per call between the two.
short_bytes=$(cat "$WORK"/tsum/*.dtrace | wc -c)
rm -rf "$WORK/tfull" "$WORK/tsum"
# shellcheck disable=SC2086 # TORCH_ARGS is two words on purpose
set -- $TORCH_ARGS
env LD_PRELOAD="$SHIM" DETSHIM_TRACE_LEVEL=summary DETSHIM_TRACE="$WORK/tlong" "$PY" "$TORCH_PROG" \
    "$LONG_STEPS" "$2" > /dev/null
long_calls=$("$DETDIFF" --show "$WORK/tlong" | awk '$1 == "summary:" { n += $2 } END { print n + 0 }')
long_bytes=$(cat "$WORK"/tlong/*.dtrace | wc -c)
[ "$long_calls" -gt "$calls" ] || die "the long summary training holds $long_calls calls"
printf '  %-44s %12s %12s %14s\n' "training ($LONG_STEPS $2), summary" "$long_calls" \
    "$(bytes_per_call "$WORK/tlong" "$long_calls")" "-"
echo "  (marginal, between the two lengths: $(awk -v a="$short_bytes" -v b="$long_bytes" \
    -v m="$calls" -v n="$long_calls" 'BEGIN { printf "%.4f", (b - a) / (n - m) }') bytes per call)"
rm -rf "$WORK/tlong"
# The loop: bounded (max_bytes) so that a writer bug cannot fill the disk.
printf 'include = passthrough\n[trace]\nmax_bytes = 64M\n' > "$WORK/loop.policy"
sec=$(seconds_of env LD_PRELOAD="$SHIM" DETSHIM_POLICY="$WORK/loop.policy" DETSHIM_TRACE_LEVEL=summary \
    DETSHIM_TRACE="$WORK/loop" "$TRACE_CALLS" "$SUMMARY_CALLS")
"$DETDIFF" --show "$WORK/loop" | grep -q "summary: $SUMMARY_CALLS calls in" ||
    die "the summary loop's trace does not hold $SUMMARY_CALLS calls"
printf '  %-44s %12s %12s %14s\n' "loop of cblas_ddot n=1, summary ($sec s)" "$SUMMARY_CALLS" \
    "$(bytes_per_call "$WORK/loop" "$SUMMARY_CALLS")" "-"
echo "  (goal: under 2 bytes per call; a full trace is ~250; window 4096 records)"
rm -rf "$WORK/loop"
# The same loop, full and compressed, with the shim's time per call of each.
zcalls=200000 # 50 MB uncompressed, under the 64M bound
for c in off zstd; do
    sec=$(seconds_of env LD_PRELOAD="$SHIM" DETSHIM_POLICY="$WORK/loop.policy" \
        DETSHIM_TRACE_COMPRESS=$c DETSHIM_TRACE="$WORK/loop-$c" "$TRACE_CALLS" "$zcalls")
    printf '  %-44s %12s %12s %14s\n' "loop of cblas_ddot n=1, full, compress $c ($sec s)" \
        "$zcalls" "$(bytes_per_call "$WORK/loop-$c" "$zcalls")" "-"
done
[ "$("$DETDIFF" --root "$WORK/loop-off")" = "$("$DETDIFF" --root "$WORK/loop-zstd")" ] ||
    die "the loop's compressed trace has another root than its full trace"
rm -rf "$WORK/loop-off" "$WORK/loop-zstd"
echo
echo "== Step and op records (docs/frameworks.md): tests/bench/bench_steps.py, in one traced process"
echo "   per step of an MLP (hidden 1024, batch 128) and a transformer encoder, SGD and Adam, median and best of 5 runs"
rm -rf "$WORK/steps"
env LD_PRELOAD="$SHIM" DETSHIM_TRACE="$WORK/steps" "$PY" "$TOP/tests/bench/bench_steps.py" \
    "$TOP/policies/python" 100 1024
[ "$(records "$WORK/steps")" -gt 0 ] || die "bench_steps wrote no records: shim not reached?"
rm -rf "$WORK/steps"
echo

echo "== Python start-up: python3 -c pass, a program that never imports torch (median of 21 runs)"
# Under -p pytorch the shim is preloaded and the start-up hook is on
# PYTHONPATH; the hook must cost such a program next to nothing.
DETRUN=$TOP/scripts/detrun
start_plain=""
start_policy=""
for i in $(seq 21); do
    start_plain="$start_plain $(seconds_of "$PY" -c pass)"
    start_policy="$start_policy $(seconds_of "$DETRUN" -p pytorch -- "$PY" -c pass)"
done
median() {
    echo $1 | tr ' ' '\n' | sort -n | sed -n 11p
}
mp=$(median "$start_plain")
mq=$(median "$start_policy")
printf '  %-36s %10s\n' "" "seconds"
printf '  %-36s %10s\n' "plain" "$mp"
printf '  %-36s %10s\n' "detrun -p pytorch (shim + hook)" "$mq"
echo "  ratio $(ratio "$mq" "$mp") (includes detrun's own shell and the shim's start-up)"
echo
echo "== The audit module (LD_AUDIT): python3 -c 'import torch', shim preloaded (median of 21 runs)"
# The dynamic linker calls the module once per loaded object (torch loads
# dozens) and per binding into a CUDA library; it must cost little.
AUDIT=$TOP/build/libdetshim-audit.so
imp_pre=""
imp_audit=""
for i in $(seq 21); do
    imp_pre="$imp_pre $(seconds_of env LD_PRELOAD="$SHIM" "$PY" -c 'import torch')"
    imp_audit="$imp_audit $(seconds_of env LD_PRELOAD="$SHIM" LD_AUDIT="$AUDIT" \
        "$PY" -c 'import torch')"
done
ip=$(median "$imp_pre")
ia=$(median "$imp_audit")
printf '  %-36s %10s\n' "" "seconds"
printf '  %-36s %10s\n' "LD_PRELOAD" "$ip"
printf '  %-36s %10s\n' "LD_PRELOAD + LD_AUDIT" "$ia"
echo "  ratio $(ratio "$ia" "$ip")"
echo
echo "== Verification: artifact hashing, the attestation, detverify against the bare re-run"
# A 1 GiB checkpoint written with dd, traced: the shim hashes it (SHA-256)
# at exit. The difference is the cost a 1 GB torch.save would see.
DETVERIFY=$TOP/build/detverify
mkdir -p "$WORK/art"
plain_w=$(cd "$WORK/art" && seconds_of dd if=/dev/zero of=ckpt.pt bs=1M count=1024 status=none)
rm -f "$WORK/art/ckpt.pt"
traced_w=$(cd "$WORK/art" && seconds_of env LD_PRELOAD="$SHIM" DETSHIM_POLICY=default \
    DETSHIM_TRACE="$WORK/art/trace" dd if=/dev/zero of=ckpt.pt bs=1M count=1024 status=none)
"$DETDIFF" --show "$WORK/art/trace" | grep -q ' artifact\.write path=ckpt\.pt size=1073741824 ' ||
    die "the 1 GiB write was not recorded as an artifact"
rm -rf "$WORK/art"
printf '  %-36s %10s\n' "" "seconds"
printf '  %-36s %10s\n' "write 1 GiB (dd), plain" "$plain_w"
printf "  %-36s %10s\n" "the same, traced: hashed at exit" "$traced_w"
awk -v p="$plain_w" -v t="$traced_w" 'BEGIN { d = t - p; if (d > 0) printf "  hashing cost %.2f s, %.0f MB/s\n", d, 1073.741824 / d; else print "  hashing cost below the noise" }'
# A small training, published then verified: detverify's wall time is the
# re-run's plus its own comparison.
mkdir -p "$WORK/ver/data"
printf '1,2,3\n4,5,6\n' > "$WORK/ver/data/train.csv"
ART=$TOP/tests/programs/artifacts_py.py
bare=$(cd "$WORK/ver" && seconds_of "$DETRUN" -p pytorch -t pub/trace -- "$PY" "$ART")
attest=$(cd "$WORK/ver" && seconds_of "$DETVERIFY" --attest pub/trace)
verified=$(cd "$WORK/ver" && seconds_of "$DETVERIFY" pub/trace -- "$PY" "$ART")
rm -rf "$WORK/ver" "${TMPDIR:-/tmp}"/detverify.*
printf '  %-36s %10s\n' "detrun -t (run + attestation)" "$bare"
printf '  %-36s %10s\n' "detverify --attest alone" "$attest"
printf '  %-36s %10s\n' "detverify (re-run + compare)" "$verified"
echo "  ratio detverify / detrun $(ratio "$verified" "$bare")"
echo
echo "== detdiff on two identical traces: wall time and peak memory"
# Two runs of the same loop (cblas_ddot n=1) give two equal traces, the
# longest comparison there is: every record read and compared. detdiff
# opens runs without loading their records, so its memory is a constant
# plus per-thread state. Measured by hand on this 2-core machine with
# BENCH_DIFF_RECORDS=10000000 (2.4 GB per trace): see README.md, Benchmarks.
# peak_of CMD...: "SECONDS PEAK_MB" of CMD (output discarded).
peak_of() {
    /usr/bin/time -f '%e %M' -o "$DIFF_WORK/time" "$@" > /dev/null 2>&1 || [ $? -eq 1 ]
    awk '{ printf "%s %.1f", $1, $2 / 1024 }' "$DIFF_WORK/time"
}
# diff_rows A B: one row per detdiff measured on runs A and B.
diff_rows() {
    for d in "$DETDIFF" $DIFF_BASELINE; do
        label="detdiff of this build"
        [ "$d" = "$DETDIFF" ] || label="baseline $d"
        set -- $(peak_of "$d" "$DIFF_WORK/a" "$DIFF_WORK/b")
        printf '  %-36s %10s %10s\n' "$label" "$1" "$2"
    done
}
mkdir -p "$DIFF_WORK"
for run in a b; do
    env LD_PRELOAD="$SHIM" DETSHIM_TRACE="$DIFF_WORK/$run" "$TRACE_CALLS" "$DIFF_RECORDS" > /dev/null
done
n=$(du -sh "$DIFF_WORK/a" | cut -f1)
"$DETDIFF" "$DIFF_WORK/a" "$DIFF_WORK/b" > /dev/null || die "two equal traces differ"
echo "  $DIFF_RECORDS records on the main thread, $n per trace"
printf '  %-36s %10s %10s\n' "" "seconds" "peak MB"
diff_rows
rm -rf "$DIFF_WORK/a" "$DIFF_WORK/b"
for run in a b; do
    env LD_PRELOAD="$SHIM" DETSHIM_TRACE="$DIFF_WORK/$run" "$TRACE_CALLS" 2 "$DIFF_THREADS" > /dev/null
done
echo "  $DIFF_THREADS threads of 2 records each (thread pairing: one table lookup per thread)"
printf '  %-36s %10s %10s\n' "" "seconds" "peak MB"
diff_rows
rm -rf "$DIFF_WORK"
