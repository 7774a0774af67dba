#!/bin/bash
# Runs the integration tests (after `make all` and the test programs are
# built), prints each one's verdict, and fails if any failed.
#   scripts/run-integration.sh                 every tests/integration/test-*.sh
#   scripts/run-integration.sh test-detdiff    the named ones only (.sh optional)
# A test that exits 77 was skipped (it said why); it is counted apart, never
# as passed. With OFFLINE=1 (make check), a test whose file has the line
# "# needs: venv" is skipped: it runs wheels from the PyPI venv.
#
# Tests run side by side, TEST_JOBS at a time (default: the CPUs
# this process may use, at most 4; 1 runs them one after another). Most
# tests keep one CPU busy, so on CI's 2 CPUs two at a time take about half
# as long. Each test's output goes to a log and is printed whole when it
# ends, so the output of two tests never interleaves; the order is the
# order they end in. A test with a line "# slow: SECONDS" (about how long
# it takes on 2 CPUs) starts before the others, the longest first, so
# that a long one does not start last. With one job, each test's output
# is printed as it runs. Each test has its own scratch folder
# (tests/integration/lib.sh), so none sees another's files.
set -u
cd "$(dirname "$0")/.."
if [ $# -eq 0 ]; then
    set -- tests/integration/test-*.sh
fi

jobs=${TEST_JOBS:-}
if [ -z "$jobs" ]; then
    jobs=$(nproc 2> /dev/null || echo 1)
    [ "$jobs" -le 4 ] || jobs=4
fi
case $jobs in
'' | *[!0-9]* | 0)
    echo "integration: TEST_JOBS='$jobs' is not a positive number; set it to 1 or more" >&2
    exit 2
    ;;
esac

# The same root lib.sh gives the tests' scratch folders: a run on the
# sanitized build (scripts/run-sanitize.sh, itself inside a test) keeps
# its own, apart from the outer run's folders of the same names.
logs=${DETSHIM_SANITIZE_BUILD:-$PWD/build}/work/.logs
rm -rf "$logs"
mkdir -p "$logs" || exit 2

order=() # the tests, "# slow" ones first (longest first), then as named
for name in "$@"; do
    t=tests/integration/$(basename "${name%.sh}").sh
    if [ ! -f "$t" ]; then
        echo "integration: no test $t; the tests are tests/integration/test-*.sh" >&2
        exit 2
    fi
    secs=$(sed -n 's/^# slow: \([0-9][0-9]*\)$/\1/p' "$t" | head -1)
    order+=("${secs:-0} ${#order[@]} $t")
done
mapfile -t order < <(printf '%s\n' "${order[@]}" | sort -k1,1nr -k2,2n | cut -d' ' -f3-)

failed=""
skipped=""
total=0
declare -A running=() # test name -> its pid

# report NAME: prints a finished test's log and time, and counts it.
report() {
    local name=$1 rc secs
    read -r rc secs < "$logs/$name.rc"
    cat "$logs/$name.log"
    case $rc in
    0) ;;
    77) skipped="$skipped $name" ;;
    *) failed="$failed $name" ;;
    esac
    echo "   (${secs}s)"
}

# reap: reports every test that has ended since the last call (one whose
# runner was killed before it wrote a status counts as failed).
reap() {
    local name
    for name in "${!running[@]}"; do
        if [ ! -f "$logs/$name.rc" ] && ! kill -0 "${running[$name]}" 2> /dev/null; then
            echo "FAIL $name: its runner ended without a status (killed?)" >> "$logs/$name.log"
            echo "1 ?" > "$logs/$name.rc"
        fi
        if [ -f "$logs/$name.rc" ]; then
            wait "${running[$name]}" 2> /dev/null
            unset "running[$name]"
            report "$name"
        fi
    done
}

trap 'kill ${running[*]:-} 2> /dev/null; exit 130' INT TERM

for t in "${order[@]}"; do
    name=$(basename "$t" .sh)
    total=$((total + 1))
    if [ "${OFFLINE:-}" = 1 ] && grep -q '^# needs: venv$' "$t"; then
        echo "SKIP $name: needs the PyPI venv (build/venv); make test installs it"
        skipped="$skipped $name"
        continue
    fi
    if [ "$jobs" -eq 1 ]; then
        start=$(date +%s)
        sh "$t"
        rc=$?
        echo "$rc $(($(date +%s) - start))" > "$logs/$name.rc"
        : > "$logs/$name.log" # printed already
        report "$name"
        continue
    fi
    while [ ${#running[@]} -ge "$jobs" ]; do
        wait -n 2> /dev/null
        reap
    done
    (
        start=$(date +%s)
        sh "$t" > "$logs/$name.log" 2>&1 < /dev/null
        echo "$? $(($(date +%s) - start))" > "$logs/$name.rc.tmp"
        mv "$logs/$name.rc.tmp" "$logs/$name.rc"
    ) &
    running[$name]=$!
done
while [ ${#running[@]} -gt 0 ]; do
    wait -n 2> /dev/null
    reap
done

nskipped=$(echo $skipped | wc -w)
if [ -n "$failed" ]; then
    echo "integration: FAILED:$failed (of $total${skipped:+; skipped:$skipped})"
    exit 1
fi
echo "integration: $((total - nskipped)) of $total passed${skipped:+; skipped:$skipped}"
