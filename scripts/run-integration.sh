#!/bin/sh
# Runs every tests/integration/test-*.sh (after `make all` and the test
# programs are built), prints each one's verdict, and fails if any failed.
# A test that exits 77 was skipped (it says why): counted apart, not passed.
set -u
cd "$(dirname "$0")/.."
failed=""
skipped=""
total=0
for t in tests/integration/test-*.sh; do
    total=$((total + 1))
    start=$(date +%s)
    sh "$t"
    case $? in
    0) ;;
    77) skipped="$skipped $(basename "$t")" ;;
    *) failed="$failed $(basename "$t")" ;;
    esac
    echo "   ($(( $(date +%s) - start ))s)"
done
if [ -n "$failed" ]; then
    echo "integration: FAILED:$failed (of $total)"
    exit 1
fi
nskipped=$(echo $skipped | wc -w)
if [ "$nskipped" -gt 0 ]; then
    echo "integration: $((total - nskipped)) of $total passed; skipped, not passed:$skipped"
else
    echo "integration: all $total passed"
fi
