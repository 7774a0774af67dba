#!/bin/sh
# Pinned randomness: unseeded programs draw the same "random" bytes every
# run under the shim, and different ones without it (so the test proves
# something); forked children get streams of their own; crypto libraries
# keep real entropy.
# slow: 25
. "$(dirname "$0")/lib.sh"
P=$PROGS/rng_prog
RNG_PY=$TOP/tests/programs/rng_py.py
UNSEEDED=$TOP/tests/programs/torch_unseeded.py

# same_under_shim_differs_without WHAT CMD...: two runs under the shim
# agree line by line, two runs without it disagree on every line.
same_under_shim_differs_without() {
    what=$1
    shift
    LD_PRELOAD=$SHIM "$@" > "$WORK/s1" 2>&1
    LD_PRELOAD=$SHIM "$@" > "$WORK/s2" 2>&1
    "$@" > "$WORK/p1" 2>&1
    sleep 1 # a new second for programs seeding from time(NULL)
    "$@" > "$WORK/p2" 2>&1
    expect_eq "$what: same under the shim" "$(cat "$WORK/s1")" "$(cat "$WORK/s2")"
    n=$(wc -l < "$WORK/p1")
    same=$(paste -d'\n' "$WORK/p1" "$WORK/p2" | awk 'NR % 2 { a = $0; next } a == $0' | wc -l)
    expect_eq "$what: without the shim, no line repeats ($n lines)" 0 "$same"
}

same_under_shim_differs_without "C srand(time ^ pid)" $P srand
same_under_shim_differs_without "C /dev/urandom via fopen+fread and open+read" $P urandom
same_under_shim_differs_without "C arc4random family" $P arc4
same_under_shim_differs_without "Python os.urandom, random, numpy, secrets.randbits, set order, torch.seed, subprocess" \
    $PY "$RNG_PY"
expect_lines "Python: every source printed" 7 "$WORK/s1"

# libstdc++'s std::random_device, whose rdrand no libc interposer sees:
# pinned through the member its operator() calls, and traced.
printf '[rng]\npin = none\n' > "$WORK/nopin.policy"
if command -v c++ > /dev/null 2>&1 &&
    c++ -O2 -o "$WORK/random_device" "$TOP/tests/programs/random_device.cpp" 2> "$WORK/cxx.err"; then
    same_under_shim_differs_without "C++ std::random_device (default, mt19937 seed, /dev/urandom)" \
        "$WORK/random_device"
    shim "$WORK/rd" "$WORK/random_device" > /dev/null
    $DETDIFF --show "$WORK/rd" > "$WORK/rd.show"
    expect_eq "std::random_device: each draw traced, pinned" 5 \
        "$(grep -c 'std::random_device n=4 .*rng.source=std::random_device rng=pinned' "$WORK/rd.show")"
    a=$(LD_PRELOAD=$SHIM DETSHIM_POLICY=$WORK/nopin.policy "$WORK/random_device")
    b=$(LD_PRELOAD=$SHIM DETSHIM_POLICY=$WORK/nopin.policy "$WORK/random_device")
    expect_ne "[rng] pin = none leaves std::random_device real" "$a" "$b"
else
    skip_check "std::random_device" "no working C++ compiler (c++) here: $(head -1 "$WORK/cxx.err" 2> /dev/null)"
fi

# Children of fork: different from each other and the parent, same across runs.
LD_PRELOAD=$SHIM $P fork > "$WORK/f1"
LD_PRELOAD=$SHIM $P fork > "$WORK/f2"
expect_eq "fork: same streams across runs" "$(cat "$WORK/f1")" "$(cat "$WORK/f2")"
expect_eq "fork: parent and both children all differ" 4 "$(cut -d' ' -f2 "$WORK/f1" | sort -u | wc -l)"

# libcrypto's own entropy stays real: a pinned key would be a security hole.
a=$(LD_PRELOAD=$SHIM $P openssl)
b=$(LD_PRELOAD=$SHIM $P openssl)
expect_ne "RAND_bytes from libcrypto is not pinned" "$a" "$b"
# ... unless the policy says otherwise: exempt_modules adds, pin = none removes.
a=$(LD_PRELOAD=$SHIM DETSHIM_POLICY=$WORK/nopin.policy $P urandom)
b=$(LD_PRELOAD=$SHIM DETSHIM_POLICY=$WORK/nopin.policy $P urandom)
expect_ne "[rng] pin = none leaves /dev/urandom real" "$a" "$b"
printf '[rng]\nexempt_modules = rng_prog\n' > "$WORK/exempt.policy"
a=$(LD_PRELOAD=$SHIM DETSHIM_POLICY=$WORK/exempt.policy $P urandom)
b=$(LD_PRELOAD=$SHIM DETSHIM_POLICY=$WORK/exempt.policy $P urandom)
expect_ne "[rng] exempt_modules exempts the program's own module" "$a" "$b"
a=$(LD_PRELOAD=$SHIM DETSHIM_SEED=7 $P urandom)
b=$(LD_PRELOAD=$SHIM DETSHIM_SEED=8 $P urandom)
expect_ne "DETSHIM_SEED changes every stream" "$a" "$b"

# Every entropy read is a record: source, count, digest, call site.
shim "$WORK/t1" $P urandom > /dev/null
$DETDIFF --show "$WORK/t1" > "$WORK/t1.show"
expect_grep "fread of /dev/urandom traced" "fread n=16 .*rng.source=/dev/urandom rng=pinned" "$WORK/t1.show"
expect_grep "read of /dev/urandom traced" " read n=16 .*rng.source=/dev/urandom rng=pinned" "$WORK/t1.show"
shim "$WORK/t2" $P urandom > /dev/null
$DETDIFF "$WORK/t1" "$WORK/t2" > /dev/null
expect_eq "traces of two pinned runs: identical" 0 $?

# An unmodified, unseeded PyTorch training: os.urandom seed, set order,
# numpy noise, dropout, a shuffling DataLoader with two workers.
w1=$(shim "$WORK/u1" $PY "$UNSEEDED")
w2=$(shim "$WORK/u2" $PY "$UNSEEDED")
w3=$($PY "$UNSEEDED")
w4=$($PY "$UNSEEDED")
expect_eq "unseeded PyTorch training: same weights under the shim" "$w1" "$w2"
expect_ne "unseeded PyTorch training: different weights without it" "$w3" "$w4"
$DETDIFF "$WORK/u1" "$WORK/u2" > "$WORK/u.out"
expect_eq "unseeded PyTorch training: traces identical" 0 $?
expect_grep "DataLoader workers traced as forked processes" "^identical: [3-9] processes" "$WORK/u.out"
finish
