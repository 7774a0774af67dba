#!/bin/sh
# Runs the integration tests (after `make all` and the test programs are
# built), prints each one's verdict, and fails if any failed.
#   scripts/run-integration.sh                 every tests/integration/test-*.sh
#   scripts/run-integration.sh test-detdiff    the named ones only (.sh optional)
# A test that exits 77 was skipped (it said why); it is counted apart, never
# as passed. With OFFLINE=1 (make check), a test whose file has the line
# "# needs: venv" is skipped: it runs wheels from the PyPI venv.
set -u
cd "$(dirname "$0")/.."
if [ $# -eq 0 ]; then
    set -- tests/integration/test-*.sh
fi
failed=""
skipped=""
total=0
for name in "$@"; do
    t=tests/integration/$(basename "${name%.sh}").sh
    if [ ! -f "$t" ]; then
        echo "integration: no test $t; the tests are tests/integration/test-*.sh" >&2
        exit 2
    fi
    total=$((total + 1))
    if [ "${OFFLINE:-}" = 1 ] && grep -q '^# needs: venv$' "$t"; then
        echo "SKIP $(basename "$t" .sh): needs the PyPI venv (build/venv); make test installs it"
        skipped="$skipped $(basename "$t")"
        continue
    fi
    start=$(date +%s)
    sh "$t"
    case $? in
    0) ;;
    77) skipped="$skipped $(basename "$t")" ;;
    *) failed="$failed $(basename "$t")" ;;
    esac
    echo "   ($(( $(date +%s) - start ))s)"
done
nskipped=$(echo $skipped | wc -w)
if [ -n "$failed" ]; then
    echo "integration: FAILED:$failed (of $total${skipped:+; skipped:$skipped})"
    exit 1
fi
echo "integration: $((total - nskipped)) of $total passed${skipped:+; skipped:$skipped}"
