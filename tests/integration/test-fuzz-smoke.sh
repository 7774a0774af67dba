#!/bin/sh
# A 20-second libFuzzer smoke of each harness of tests/fuzz/ (the trace
# reader, detdiff's comparison and printers, the policy parser) under
# ASan+UBSan, from seeds built from real traces: a crash, leak, undefined
# behaviour or 10-second input fails the test. Inputs that once found a
# bug (tests/fuzz/regressions/) are among the seeds, so each is run again. Skipped, with the
# reason, where clang cannot link -fsanitize=fuzzer. Long runs: make fuzz.
# slow: 85
. "$(dirname "$0")/lib.sh"
SMOKE_SECONDS=${FUZZ_SMOKE_SECONDS:-20}

CLANG=${FUZZ_CC:-clang}
command -v "$CLANG" > /dev/null 2>&1 || skip "no $CLANG on PATH: the fuzz harnesses need clang with libFuzzer"
printf 'int LLVMFuzzerTestOneInput(const unsigned char *d, unsigned long n) { (void)d; (void)n; return 0; }\n' \
    > "$WORK/probe.c"
if ! "$CLANG" -fsanitize=fuzzer,address,undefined -o "$WORK/probe" "$WORK/probe.c" > "$WORK/probe.log" 2>&1; then
    skip "$CLANG cannot link -fsanitize=fuzzer,address,undefined: $(head -1 "$WORK/probe.log")"
fi
if ! env -u MAKEFLAGS -u MAKELEVEL make -s -C "$TOP" fuzz-build > "$WORK/build.log" 2>&1; then
    fail "cannot build the fuzz harnesses:"
    sed 's/^/    /' "$WORK/build.log" | tail -20 >&2
    finish
fi

FUZZ_SECONDS=$SMOKE_SECONDS FUZZ_DIR=$WORK/fuzz FUZZ_RSS_MB=1024 \
    timeout -s KILL $((3 * SMOKE_SECONDS + 150)) "$TOP/scripts/run-fuzz.sh" > "$WORK/run.log" 2>&1
expect_eq "run-fuzz.sh: exit status (1: a harness found something, see $WORK/run.log)" 0 $?
sed 's/^/    /' "$WORK/run.log"

# figure HARNESS WORD: the number before WORD in the harness's line.
figure() {
    sed -n "s/^fuzz $1: .* \([0-9][0-9]*\) $2.*/\1/p" "$WORK/run.log" | head -1
}
# Minimum edges: a harness that stops reaching its parser (e.g. the frame
# checks no longer repaired, or every input refused early) falls far below.
for h in reader:300 detdiff:900 policy:150; do
    name=${h%:*}
    min=${h#*:}
    execs=$(figure "$name" execs)
    cov=$(sed -n "s/^fuzz $name: .* cov \([0-9]*\) edges.*/\1/p" "$WORK/run.log")
    expect_eq "the $name harness ran inputs" yes "$([ "${execs:-0}" -gt 1000 ] && echo yes || echo "no (${execs:-none} execs)")"
    expect_eq "the $name harness reached at least $min edges" yes \
        "$([ "${cov:-0}" -ge "$min" ] && echo yes || echo "no (${cov:-none})")"
done
expect_eq "no crash inputs kept" 0 "$(ls "$WORK/fuzz/crashes" 2> /dev/null | wc -l | tr -d ' ')"
# The corpora are scratch: only the logs stay.
rm -rf "$WORK/fuzz/live" "$WORK/fuzz/seeds" "$WORK/probe"
finish
