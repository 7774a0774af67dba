#!/bin/sh
# Runs the libFuzzer harnesses of tests/fuzz/ (built by `make fuzz-build`),
# each for FUZZ_SECONDS, from seeds rebuilt by tests/fuzz/mkcorpus.sh plus
# the inputs earlier runs kept, and prints one line of figures per harness.
#   FUZZ_SECONDS=300 scripts/run-fuzz.sh [reader|detdiff|policy ...]
#   FUZZ_DIR    where corpora, crashes and scratch go (build/fuzz)
#   FUZZ_RSS_MB memory limit per harness (2048); an input that needs more
#               is a finding, as is one that runs longer than 10 s
# Every run is bounded in time, memory, input size and corpus size: this
# machine is shared. Exit 0: no harness found anything; 1: a crash, leak,
# undefined behaviour or timeout, its input kept as FUZZ_DIR/crashes/*;
# 2: the harnesses could not run.
set -u
cd "$(dirname "$0")/.."
SECONDS_EACH=${FUZZ_SECONDS:-300}
DIR=${FUZZ_DIR:-build/fuzz}
RSS=${FUZZ_RSS_MB:-2048}
MAX_CORPUS_MB=256
[ $# -gt 0 ] || set -- reader detdiff policy
for h in "$@"; do
    if [ ! -x "build/fuzz/fuzz_$h" ]; then
        echo "run-fuzz: no build/fuzz/fuzz_$h; run make fuzz-build (needs clang with libFuzzer)" >&2
        exit 2
    fi
done
mkdir -p "$DIR/crashes" "$DIR/tmp" || exit 2
tests/fuzz/mkcorpus.sh "$DIR/seeds" > "$DIR/mkcorpus.log" 2>&1 || {
    echo "run-fuzz: cannot build the seed corpora:" >&2
    cat "$DIR/mkcorpus.log" >&2
    exit 2
}
export DETSHIM_FUZZ_TMP=$DIR/tmp DETSHIM_FUZZ_REF=$DIR/seeds/ref
found=""
for h in "$@"; do
    live=$DIR/live/$h
    # A corpus kept from earlier runs is bounded: past the cap it is
    # dropped (the seeds come back at once, and coverage with them).
    if [ -d "$live" ] && [ "$(du -sm "$live" | cut -f1)" -gt $MAX_CORPUS_MB ]; then
        echo "run-fuzz: $live is over $MAX_CORPUS_MB MB; starting it again from the seeds"
        rm -rf "$live"
    fi
    mkdir -p "$live"
    log=$DIR/$h.log
    before=$(ls "$DIR/crashes" | wc -l)
    # -close_fd_mask=2: detdiff's --root warns on stderr for every damaged
    # input; libFuzzer and the sanitizers still report there.
    timeout -s KILL $((SECONDS_EACH + 120)) "build/fuzz/fuzz_$h" \
        -max_total_time="$SECONDS_EACH" -rss_limit_mb="$RSS" -malloc_limit_mb="$RSS" \
        -timeout=10 -max_len=65536 -close_fd_mask=2 -print_final_stats=1 \
        -artifact_prefix="$DIR/crashes/$h-" "$live" "$DIR/seeds/$h" > "$log" 2>&1
    rc=$?
    after=$(ls "$DIR/crashes" | wc -l)
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    last=$(grep -E '^#[0-9]+' "$log" | tail -1)
    cov=$(echo "$last" | sed -n 's/.* cov: \([0-9]*\).*/\1/p')
    ft=$(echo "$last" | sed -n 's/.* ft: \([0-9]*\).*/\1/p')
    corp=$(echo "$last" | sed -n 's/.* corp: \([0-9]*\/[0-9a-zA-Z]*\).*/\1/p')
    rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
    echo "fuzz $h: ${SECONDS_EACH}s, ${execs:-?} execs (${rate:-?}/s), cov ${cov:-?} edges," \
        "ft ${ft:-?} features, corpus ${corp:-?}, new crash inputs $((after - before)), exit $rc"
    if [ $rc -ne 0 ] || [ "$after" -ne "$before" ]; then
        found="$found $h"
        grep -m5 -E 'ERROR: |runtime error:|SUMMARY:' "$log" | sed 's/^/    /'
        echo "    log: $log; inputs: $DIR/crashes/$h-*"
    fi
done
rm -rf "$DIR/tmp"
if [ -n "$found" ]; then
    echo "run-fuzz: found something in:$found (reproduce: build/fuzz/fuzz_NAME INPUT)"
    exit 1
fi
