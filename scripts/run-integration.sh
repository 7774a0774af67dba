#!/bin/sh
# Runs every tests/integration/test-*.sh (after `make all` and the test
# programs are built), prints each one's verdict, and fails if any failed.
set -u
cd "$(dirname "$0")/.."
failed=""
total=0
for t in tests/integration/test-*.sh; do
    total=$((total + 1))
    start=$(date +%s)
    if sh "$t"; then :; else failed="$failed $(basename "$t")"; fi
    echo "   ($(( $(date +%s) - start ))s)"
done
if [ -n "$failed" ]; then
    echo "integration: FAILED:$failed (of $total)"
    exit 1
fi
echo "integration: all $total passed"
