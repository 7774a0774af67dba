#!/bin/sh
# `detrun --explain` for every shipped policy matches its golden file
# (tests/golden/explain-<policy>.txt), with the repository's path written
# as <top> and the count of CPUs the process may run on as <cpus>: a
# change to what a policy pins must be a deliberate change to its golden
# file too. Regenerate them with:
#   sh tests/integration/test-explain.sh --update
. "$(dirname "$0")/lib.sh"
GOLDEN=$TOP/tests/golden
update=0
[ "${1:-}" = "--update" ] && update=1
for file in "$TOP"/policies/*.policy; do
    name=$(basename "$file" .policy)
    # A clean environment: what the user has set would show in the output.
    env -i PATH=/usr/bin:/bin "$TOP/scripts/detrun" -p "$name" --explain 2>&1 |
        sed -e "s|$TOP|<top>|g" -e 's/canonical kernels [0-9]* (/canonical kernels <cpus> (/' \
        > "$WORK/$name.txt"
    if [ "$update" = 1 ]; then
        cp "$WORK/$name.txt" "$GOLDEN/explain-$name.txt"
        echo "   updated tests/golden/explain-$name.txt"
    fi
    if [ ! -f "$GOLDEN/explain-$name.txt" ]; then
        fail "policy $name has no golden file tests/golden/explain-$name.txt; run $0 --update"
    elif diff -u "$GOLDEN/explain-$name.txt" "$WORK/$name.txt" > "$WORK/$name.diff"; then
        pass
    else
        fail "detrun -p $name --explain differs from tests/golden/explain-$name.txt:"
        sed 's/^/    /' "$WORK/$name.diff" | head -30 >&2
    fi
done
for golden in "$GOLDEN"/explain-*.txt; do
    name=$(basename "$golden" .txt | sed 's/^explain-//')
    [ -f "$TOP/policies/$name.policy" ] && pass ||
        fail "tests/golden/explain-$name.txt has no policy policies/$name.policy"
done
finish
