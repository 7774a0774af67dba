#!/bin/sh
# Compressed traces ([trace] compress = zstd, docs/tracing.md#compressed-traces):
# the same root as the uncompressed trace of the same run, a smaller file,
# detdiff names a differing call as in full traces, threads, forks and
# exec; a cut or damaged compressed frame reads back up to the damage and
# says so; max_bytes counts the bytes on disk; bad settings, and a reader
# with no room to expand, say what is wrong in one line.
. "$(dirname "$0")/lib.sh"
P=$PROGS/window_prog
CALLS=20000
K=12345
export DETSHIM_POLICY=passthrough
export TMPDIR=$WORK
# run COMPRESS DIR DELTA: one traced run of window_prog.
run() {
    DETSHIM_TRACE_COMPRESS=$1 shim "$WORK/$2" "$P" $CALLS $K "$3" > "$WORK/$2.out"
    expect_eq "$2: exit status" 0 $?
}
root() { $DETDIFF --root "$WORK/$1"; }

# ---- one run, both ways: one root, a smaller file ---------------------------
run off plain 0
run zstd packed 0
expect_eq "compressed and plain of one run: the same root" "$(root plain)" "$(root packed)"
plain_size=$(wc -c < "$WORK/plain/main.dtrace")
packed_size=$(wc -c < "$WORK/packed/main.dtrace")
if [ "$packed_size" -ge $((plain_size / 3)) ]; then
    fail "compressed trace is $packed_size bytes, not under a third of the plain $plain_size"
else pass; fi
$DETDIFF "$WORK/plain" "$WORK/packed" > "$WORK/same.txt"
expect_eq "plain vs compressed of one run: detdiff exit" 0 $?
expect_grep "... identical, every record" "^identical: 1 process, 200[0-9]{2} records" \
    "$WORK/same.txt"
$DETDIFF --show "$WORK/packed" > "$WORK/show.txt"
expect_grep "the header says it is compressed (informational)" \
    "^  compression = zstd \(informational\)" "$WORK/show.txt"
expect_grep "--show reads the records" "^    $K cblas_ddot" "$WORK/show.txt"
expect_grep "--show gives both sizes" "^process main \(.*, $packed_size bytes compressed, [0-9]+ expanded\)" \
    "$WORK/show.txt"
expect_no_grep "--show: nothing damaged" "truncated|damaged" "$WORK/show.txt"
expect_no_grep "libzstd, loaded by the shim only, is not a loaded object of the program" \
    "env.object name=libzstd" "$WORK/show.txt"
ls "$WORK" | grep -q detshim-expand && fail "the reader left an expanded file in TMPDIR" || pass

# The policy key does the same; the environment's off wins over it.
printf 'include = passthrough\n[trace]\ncompress = zstd\n' > "$WORK/z.policy"
DETSHIM_POLICY=$WORK/z.policy shim "$WORK/bypolicy" "$P" $CALLS $K 0 > /dev/null
$DETDIFF --show "$WORK/bypolicy" | grep -q "compression = zstd" && pass ||
    fail "[trace] compress = zstd in a policy did not compress"
DETSHIM_POLICY=$WORK/z.policy DETSHIM_TRACE_COMPRESS=off shim "$WORK/envoff" "$P" $CALLS $K 0 \
    > /dev/null
$DETDIFF --show "$WORK/envoff" | grep -q "compression" && fail "DETSHIM_TRACE_COMPRESS=off did not win" ||
    pass
expect_eq "a policy's compress and the environment's off: one root" "$(root bypolicy)" \
    "$(root envoff)"
"$TOP/scripts/detrun" -p "$WORK/z.policy" --explain > "$WORK/explain.txt" 2>&1
expect_grep "detrun --explain says so" "^\[trace\] compress zstd" "$WORK/explain.txt"

# ---- runs that differ: detdiff names the call ------------------------------
run zstd a clock
run zstd b clock
$DETDIFF "$WORK/a" "$WORK/b" > "$WORK/diff.txt"
expect_eq "two compressed traces that differ: detdiff exit" 1 $?
expect_grep "... name the call a full trace names" \
    "where: thread 0, record $K \(seq $K\), cblas_ddot" "$WORK/diff.txt"

# ---- threads, forks, exec; a summary --------------------------------------
for mode in "threads 0 1 2 3" fork exec; do
    name=$(echo "$mode" | tr -d ' ')
    for c in off zstd; do
        DETSHIM_TRACE_COMPRESS=$c shim "$WORK/$name-$c" $PROGS/procs_prog $mode > /dev/null
    done
    expect_eq "procs_prog $mode: compressed and plain have one root" "$(root "$name-off")" \
        "$(root "$name-zstd")"
done
DETSHIM_TRACE_LEVEL=summary DETSHIM_TRACE_COMPRESS=zstd shim "$WORK/sum" "$P" $CALLS $K 0 \
    > /dev/null
expect_eq "a compressed summary: the same root" "$(root plain)" "$(root sum)"

# ---- damage ---------------------------------------------------------------
F=$WORK/packed/main.dtrace
for cut in $((packed_size / 2)) $((packed_size - 40)) 3000; do
    mkdir -p "$WORK/cut$cut"
    head -c "$cut" "$F" > "$WORK/cut$cut/main.dtrace"
    $DETDIFF --show "$WORK/cut$cut" > "$WORK/cut$cut.txt" 2>&1
    rc=$?
    expect_eq "cut at byte $cut: read, not refused (exit 0)" 0 $rc
    expect_grep "cut at byte $cut: said to be truncated" "truncated: " "$WORK/cut$cut.txt"
done
# The first half holds whole compressed frames: their records are read.
n=$(grep -c "cblas_ddot" "$WORK/cut$((packed_size / 2)).txt")
if [ "$n" -gt 1000 ]; then pass; else
    fail "half a compressed trace: $n records read, expected the whole frames' (> 1000)"; fi
$DETDIFF --root "$WORK/cut$((packed_size / 2))" > "$WORK/cutroot.txt" 2>&1
expect_grep "the root of a cut trace says it covers part of the run" "do not publish" \
    "$WORK/cutroot.txt"
# One flipped byte in the middle of a compressed frame.
mkdir -p "$WORK/flip"
cp "$F" "$WORK/flip/main.dtrace"
at=$((packed_size / 2))
printf '\377' | dd of="$WORK/flip/main.dtrace" bs=1 seek=$at conv=notrunc 2> /dev/null
$DETDIFF --show "$WORK/flip" > "$WORK/flip.txt" 2>&1
expect_eq "a flipped byte: read, not refused (exit 0)" 0 $?
expect_grep "... reported as a damaged frame" "damaged frame at byte" "$WORK/flip.txt"
$DETDIFF "$WORK/plain" "$WORK/flip" > "$WORK/flipdiff.txt" 2>&1
expect_eq "a damaged compressed trace against the plain one: they differ (exit 1)" 1 $?

# ---- max_bytes counts the bytes on disk -----------------------------------
printf 'include = passthrough\n[trace]\nmax_bytes = 1M\n' > "$WORK/max.policy"
DETSHIM_POLICY=$WORK/max.policy DETSHIM_TRACE_COMPRESS=zstd shim "$WORK/max" "$P" $CALLS $K 0 \
    > /dev/null 2> "$WORK/max.err"
expect_eq "max_bytes: the program is unharmed" 0 $?
$DETDIFF --show "$WORK/max" > "$WORK/max.txt" 2>&1
expect_no_grep "1M of compressed records holds the whole run" "truncated|incomplete" "$WORK/max.txt"
DETSHIM_POLICY=$WORK/max.policy shim "$WORK/maxplain" "$P" $CALLS $K 0 > /dev/null 2>&1
$DETDIFF --show "$WORK/maxplain" > "$WORK/maxplain.txt" 2>&1
expect_grep "... where uncompressed they stop at max_bytes" "max_bytes" "$WORK/maxplain.txt"

# ---- bad settings, no room ------------------------------------------------
DETSHIM_TRACE_COMPRESS=lz4 shim "$WORK/bad" "$P" 10 5 0 > /dev/null 2> "$WORK/bad.err"
expect_eq "DETSHIM_TRACE_COMPRESS=lz4: exit 2" 2 $?
expect_grep "... one line naming the value" "^detshim: .*DETSHIM_TRACE_COMPRESS=lz4: expected zstd or off" \
    "$WORK/bad.err"
DETSHIM_ON_ERROR=warn DETSHIM_TRACE_COMPRESS=lz4 shim "$WORK/warn" "$P" 10 5 0 > /dev/null \
    2> "$WORK/warn.err"
expect_eq "DETSHIM_ON_ERROR=warn and a bad value: the program runs" 0 $?
expect_grep "... saying it goes on without compression" "continuing without compression" \
    "$WORK/warn.err"
$DETDIFF --show "$WORK/warn" > "$WORK/warn.txt" 2>&1
expect_grep "... and traced uncompressed" "^    9 cblas_ddot" "$WORK/warn.txt"
expect_no_grep "... (no compression field)" "compression = " "$WORK/warn.txt"
printf 'include = passthrough\n[trace]\ncompress = gzip\n' > "$WORK/bad.policy"
DETSHIM_POLICY=$WORK/bad.policy shim "$WORK/badp" "$P" 10 5 0 > /dev/null 2> "$WORK/badp.err"
expect_eq "[trace] compress = gzip: exit 2" 2 $?
expect_grep "... one line naming the key" "bad value 'gzip' for \[trace\] compress \(expected: off or zstd\)" \
    "$WORK/badp.err"
TMPDIR=$WORK/nowhere $DETDIFF --root "$WORK/packed" > "$WORK/noroom.txt" 2>&1
rc=$?
expect_ne "a reader with no TMPDIR to expand into: not exit 0" 0 $rc
expect_grep "... says so in one line, naming the directory" \
    "cannot expand its compressed records into $WORK/nowhere: .*; point TMPDIR at" "$WORK/noroom.txt"
expect_lines "... one line" 1 "$WORK/noroom.txt"
finish
