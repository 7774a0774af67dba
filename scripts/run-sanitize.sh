#!/bin/sh
# The unit tests and the C integration tests under ASan+UBSan: the shim,
# the reader and detdiff built again into build/sanitize with
# -fsanitize=address,undefined, the unit tests linked to those objects,
# and the integration tests run with the ASan runtime preloaded ahead of
# the sanitized shim (tests/integration/lib.sh). Every report goes to a
# log file (a test may hide a program's stderr), and any log fails the run.
#   scripts/run-sanitize.sh                 unit tests and $SANITIZE_TESTS
#   scripts/run-sanitize.sh test-errors ... unit tests and these
# Exit 0: clean; 1: a report or a failing test; 2: cannot build.
set -u
cd "$(dirname "$0")/.."
TOP=$(pwd)
SB=build/sanitize
CC=${CC:-cc}
# Tests that run C programs only (no Python, no venv): what ASan sees is
# the shim's own code, not an interpreter's lifetime allocations. Left
# out: test-exit (it preloads a test library ahead of the shim, where the
# ASan runtime must come first, and LeakSanitizer's tracer crashes at an
# exit with threads still calling) and test-gpu-dlsym (it compares with
# detrun, which loads the unsanitized shim).
[ $# -gt 0 ] || set -- ${SANITIZE_TESTS:-test-c-openblas test-errors test-fake-blas \
    test-gpu-fakes test-gpu-cublas64 test-gpu-conv-algo test-blas-args test-blas-fpenv \
    test-full-disk test-trace-dir test-detdiff test-lineage test-compress}
RT=$($CC -print-file-name=libasan.so)
if [ ! -f "$RT" ]; then
    echo "run-sanitize: $CC has no ASan runtime (libasan.so); install libasan (gcc)" >&2
    exit 2
fi
LOGS=$TOP/$SB/logs
rm -rf "$LOGS"
mkdir -p "$LOGS"
# The sanitized shim finds the shipped policies as <its folder>/../policies.
ln -sfn ../policies build/policies
if ! make -s -j2 "B=$SB" "CC=$CC -fsanitize=address,undefined" \
    "CFLAGS=-O2 -g -fno-omit-frame-pointer" all > "$LOGS/../build.log" 2>&1; then
    echo "run-sanitize: cannot build $SB:" >&2
    tail -20 "$LOGS/../build.log" >&2
    exit 2
fi
# halt_on_error: the first report stops the program, so a test fails too;
# the log files say what it was.
export ASAN_OPTIONS="log_path=$LOGS/asan:detect_leaks=1:abort_on_error=0"
export LSAN_OPTIONS="suppressions=$TOP/scripts/lsan.supp:print_suppressions=0"
export UBSAN_OPTIONS="log_path=$LOGS/ubsan:print_stacktrace=1:halt_on_error=1"
status=0
start=$(date +%s)
make -s -j2 "B=$SB" "CC=$CC -fsanitize=address,undefined" \
    "CFLAGS=-O2 -g -fno-omit-frame-pointer" unit > "$LOGS/../unit.log" 2>&1 || status=1
grep -E '^== |PASSED|FAILED' "$LOGS/../unit.log" | paste - - | sed 's/^/sanitize unit: /'
[ $status -eq 0 ] || { echo "sanitize: unit tests FAILED ($SB/unit.log)"; tail -20 "$LOGS/../unit.log"; }
unit_s=$(($(date +%s) - start))
start=$(date +%s)
DETSHIM_SANITIZE_BUILD=$TOP/$SB DETSHIM_SANITIZE_RT=$RT make -s integration T="$*" || status=1
echo "sanitize: unit tests ${unit_s}s, integration $(($(date +%s) - start))s"
if [ -n "$(ls "$LOGS")" ]; then
    echo "sanitize: reports in $LOGS:"
    for f in "$LOGS"/*; do
        echo "== $f"
        grep -m3 -E 'ERROR|runtime error|SUMMARY' "$f"
    done
    status=1
fi
exit $status
