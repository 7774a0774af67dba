# Shared by the integration tests: paths, a scratch folder per test, and
# checks that print what they expected and what they got.
# Sourced, not run. Each test ends with `finish`.
set -u
TOP=$(cd "$(dirname "$0")/../.." && pwd)
SHIM=$TOP/build/libdetshim.so
DETDIFF=$TOP/build/detdiff
# make sanitize (scripts/run-sanitize.sh) runs tests on the ASan+UBSan
# build: the ASan runtime preloaded ahead of that shim (colon-separated, so
# that $SHIM stays one word wherever a test passes it), and its detdiff.
if [ -n "${DETSHIM_SANITIZE_BUILD:-}" ]; then
    SHIM=$DETSHIM_SANITIZE_RT:$DETSHIM_SANITIZE_BUILD/libdetshim.so
    DETDIFF=$DETSHIM_SANITIZE_BUILD/detdiff
fi
PROGS=$TOP/build/programs
FAKES=$TOP/build/fakes
PY=/usr/bin/python3
VENV_PY=$TOP/build/venv/bin/python
TEST_NAME=$(basename "$0" .sh)
# Under make sanitize the scratch folders are the sanitized build's own:
# sanitize-smoke runs tests of the same names while the outer run goes on.
WORK=${DETSHIM_SANITIZE_BUILD:-$TOP/build}/work/$TEST_NAME
rm -rf "$WORK"
mkdir -p "$WORK"
checks=0
failures=0
skips=0

pass() { checks=$((checks + 1)); }
fail() {
    checks=$((checks + 1))
    failures=$((failures + 1))
    echo "FAIL $TEST_NAME: $*" >&2
}

# skip_check WHAT REASON: one check that cannot run here (the rest of the
# test can); reported, never counted as passed.
skip_check() {
    skips=$((skips + 1))
    echo "SKIP $TEST_NAME: $1: $2"
}

# expect_eq WHAT EXPECTED ACTUAL
expect_eq() {
    if [ "$2" = "$3" ]; then pass; else fail "$1: expected '$2', got '$3'"; fi
}
expect_ne() {
    if [ "$2" != "$3" ]; then pass; else fail "$1: expected something other than '$2'"; fi
}
# expect_grep WHAT PATTERN FILE
expect_grep() {
    if grep -qE -- "$2" "$3"; then pass; else
        fail "$1: no line matching '$2' in $3:"
        sed 's/^/    /' "$3" | head -20 >&2
    fi
}
expect_no_grep() {
    if grep -qE -- "$2" "$3"; then
        fail "$1: unexpected line matching '$2' in $3"
    else pass; fi
}
# expect_lines WHAT N FILE: exactly N lines
expect_lines() {
    expect_eq "$1" "$2" "$(wc -l < "$3" | tr -d ' ')"
}

# shim DIR CMD...: run CMD under the shim, tracing to DIR
shim() {
    dir=$1
    shift
    LD_PRELOAD=$SHIM DETSHIM_TRACE=$dir "$@"
}

# skip REASON: the test cannot run here (a component is missing); it is
# reported as skipped with the reason, never counted as passed.
skip() {
    echo "SKIP $TEST_NAME: $*"
    exit 77
}

finish() {
    skipped=""
    [ "$skips" -eq 0 ] || skipped=" ($skips skipped, not counted)"
    if [ "$failures" -eq 0 ]; then
        echo "PASS $TEST_NAME: $checks checks$skipped"
        exit 0
    fi
    echo "FAIL $TEST_NAME: $failures of $checks checks failed"
    exit 1
}
