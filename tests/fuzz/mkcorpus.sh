#!/bin/sh
# Builds the fuzzers' seed corpora and detdiff's fixed reference run from
# real inputs, so mutations start from what the shim writes and ships:
#   tests/fuzz/mkcorpus.sh OUT
#     OUT/reader/    trace files: blas_prog and short python3 runs under
#                    the shim, and every case of tests/integration/mktrace.py
#                    (hostile, cut-short and damaged ones included)
#     OUT/detdiff/   the same trace files
#     OUT/policy/    policies/*.policy, and every line of them alone
#     OUT/ref/ref.dtrace  detdiff's fixed run B (mktrace's "identical" case:
#                    written by a deterministic writer, so it is the same
#                    bytes on every machine and a crash reproduces anywhere)
#   tests/fuzz/regressions/  inputs that once found a bug; always seeds.
# Needs `make all` and build/programs/blas_prog. Files over 64 KiB are left
# out: libFuzzer mutates small inputs faster, and the format's frames are
# at most 64 KiB each anyway.
set -eu
TOP=$(cd "$(dirname "$0")/../.." && pwd)
OUT=$1
MAX_BYTES=65536
rm -rf "$OUT"
mkdir -p "$OUT/reader" "$OUT/detdiff" "$OUT/policy" "$OUT/ref" "$OUT/work"
W=$OUT/work

# seed FILE NAME: one trace file into both trace corpora, if small enough.
seed() {
    [ "$(wc -c < "$1")" -le $MAX_BYTES ] || return 0
    cp "$1" "$OUT/reader/$2"
    cp "$1" "$OUT/detdiff/$2"
}

# Real traces. The shim's own failure would leave no trace: say so.
traced() {
    name=$1
    shift
    if ! LD_PRELOAD=$TOP/build/libdetshim.so DETSHIM_TRACE=$W/$name timeout 60 "$@" \
        > /dev/null 2> "$W/$name.err"; then
        echo "mkcorpus: $name: traced run failed:" >&2
        cat "$W/$name.err" >&2
        exit 1
    fi
    for f in "$W/$name"/*.dtrace; do
        seed "$f" "real-$name-$(basename "$f")"
    done
}
traced blas "$TOP/build/programs/blas_prog"
traced blas-canonical env DETSHIM_POLICY=default "$TOP/build/programs/blas_prog"
traced blas-zstd env DETSHIM_TRACE_COMPRESS=zstd "$TOP/build/programs/blas_prog"
traced py-entropy /usr/bin/python3 -c 'import os, random; os.urandom(16); random.random()'
if /usr/bin/python3 -c 'import numpy' 2> /dev/null; then
    traced py-numpy env DETSHIM_POLICY=numpy /usr/bin/python3 -c \
        'import numpy as np; a = np.ones((8, 8)); print((a @ a).sum())'
fi

# The independent writer's cases: every kind of divergence and damage.
timeout 120 /usr/bin/python3 "$TOP/tests/integration/mktrace.py" "$W/mk" 2 > /dev/null
find "$W/mk" -type f -name '*.dtrace' | sort | while read -r f; do
    rel=${f#"$W/mk/"}
    seed "$f" "mk-$(echo "$rel" | tr '/' '-')"
done
cp "$W/mk/identical/a/main.dtrace" "$OUT/ref/ref.dtrace"

# Policies: the shipped ones, and their lines one by one (each a small
# policy that reaches one handler).
for p in "$TOP"/policies/*.policy; do
    b=$(basename "$p" .policy)
    cp "$p" "$OUT/policy/$b"
    section=""
    n=0
    while IFS= read -r line; do
        case $line in
        \[*) section=$line ;;
        ''|\#*) ;;
        *)
            n=$((n + 1))
            printf '%s\n%s\n' "$section" "$line" > "$OUT/policy/$b-line$n"
            ;;
        esac
    done < "$p"
done

for kind in reader detdiff policy; do
    if [ -d "$TOP/tests/fuzz/regressions/$kind" ]; then
        cp "$TOP/tests/fuzz/regressions/$kind"/* "$OUT/$kind/" 2> /dev/null || true
    fi
done
rm -rf "$W"
echo "mkcorpus: $(ls "$OUT/reader" | wc -l) traces, $(ls "$OUT/policy" | wc -l) policies in $OUT"
