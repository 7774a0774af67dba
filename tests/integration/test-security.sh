#!/bin/sh
# Pinned randomness never weakens security (docs/security.md): secrets,
# keys and identifiers stay real under the shipped policies, while the
# training randomness around them still repeats bit for bit; and a policy
# cannot make the shim run code (no loader, PATH, interpreter or shell
# variables; no control characters).
. "$(dirname "$0")/lib.sh"
DETRUN=$TOP/scripts/detrun

# ssh-keygen calls arc4random_buf from its own binary: a never-pin program.
if command -v ssh-keygen > /dev/null; then
    for i in 1 2; do
        $DETRUN -p pytorch -t "$WORK/ssh$i" -- ssh-keygen -q -t ed25519 -N '' -C t -f "$WORK/key$i"
    done
    expect_ne "ssh-keygen under detrun: two runs, two different keys" \
        "$(cut -d' ' -f2 "$WORK/key1.pub")" "$(cut -d' ' -f2 "$WORK/key2.pub")"
    $DETDIFF --show "$WORK/ssh1" > "$WORK/ssh1.show"
    expect_grep "ssh-keygen: the header says why its entropy is real" \
        "entropy_rule = real: ssh-keygen is a never-pin program" "$WORK/ssh1.show"
    expect_grep "ssh-keygen: its arc4random_buf is traced as exempt" \
        "arc4random_buf .*rng=exempt rng.why=never-pin program" "$WORK/ssh1.show"
else
    skip_check "ssh-keygen keys differ" "no ssh-keygen here (Debian: openssh-client)"
fi

# The JVM reads /dev/urandom for SecureRandom, UUIDs and key pairs.
if command -v java > /dev/null && java -version > /dev/null 2>&1; then
    for i in 1 2; do
        $DETRUN -p pytorch -- java "$TOP/tests/programs/SecretsJava.java" > "$WORK/java$i" 2>&1
    done
    expect_lines "Java: four secrets printed" 4 "$WORK/java1"
    same=$(paste -d'\n' "$WORK/java1" "$WORK/java2" | awk 'NR % 2 { a = $0; next } a == $0' | wc -l)
    expect_eq "Java SecureRandom, getInstanceStrong, UUID, X25519: none repeats" 0 "$same"
else
    skip_check "Java secrets differ" "no working java here (Debian: default-jre-headless)"
fi

# Python: secrets, uuid4, the multiprocessing authkey and tempfile names
# are real; random, numpy, secrets.randbits, torch.seed and os.urandom
# around them are pinned, and the two runs' traces and roots agree.
SECRETS_PY=$TOP/tests/programs/secrets_py.py
for i in 1 2; do
    $DETRUN -p pytorch -t "$WORK/py$i" -- $PY "$SECRETS_PY" > "$WORK/py$i.out"
done
expect_lines "Python: every line printed" 10 "$WORK/py1.out"
grep '^pinned' "$WORK/py1.out" > "$WORK/pinned1"
grep '^pinned' "$WORK/py2.out" > "$WORK/pinned2"
expect_lines "Python: five pinned sources" 5 "$WORK/pinned1"
expect_eq "Python: pinned sources repeat between runs" "$(cat "$WORK/pinned1")" "$(cat "$WORK/pinned2")"
grep '^real' "$WORK/py1.out" > "$WORK/real1"
grep '^real' "$WORK/py2.out" > "$WORK/real2"
same=$(paste -d'\n' "$WORK/real1" "$WORK/real2" | awk 'NR % 2 { a = $0; next } a == $0' | wc -l)
expect_eq "Python: no secret repeats between runs ($(wc -l < "$WORK/real1") secrets)" 0 "$same"
$DETDIFF "$WORK/py1" "$WORK/py2" > "$WORK/py.diff"
expect_eq "Python: the two runs' traces are identical" 0 $?
expect_eq "Python: the two runs' roots are equal" "$($DETDIFF --root "$WORK/py1")" \
    "$($DETDIFF --root "$WORK/py2")"
# The exempt reads advance no pinned stream: without them, the same values.
grep -v '^print("real' "$SECRETS_PY" > "$WORK/nosecrets.py"
$DETRUN -p pytorch -- $PY "$WORK/nosecrets.py" > "$WORK/nosecrets.out"
expect_eq "Python: pinned values unchanged when the secret calls are removed" \
    "$(cat "$WORK/pinned1")" "$(cat "$WORK/nosecrets.out")"
$DETDIFF --show "$WORK/py1" > "$WORK/py1.show"
expect_grep "Python: a secret's read is traced as exempt, no bytes digested" \
    "getrandom n=16 \| bytes:out:0x1:.* rng=exempt rng.why=secret" "$WORK/py1.show"
expect_grep "Python: real reads in a stream of their own, in no root" \
    '^  thread 0 \(real entropy, in no root\): ' "$WORK/py1.show"
# Real reads are outside the root: one secret or five, the same root.
SECRETS='import secrets, sys; [secrets.token_bytes(8) for _ in range(int(sys.argv[1]))]'
$DETRUN -t "$WORK/one" -- $PY -c "$SECRETS" 1
$DETRUN -t "$WORK/five" -- $PY -c "$SECRETS" 5
expect_eq "one secret or five: the same root" "$($DETDIFF --root "$WORK/one")" \
    "$($DETDIFF --root "$WORK/five")"
$DETDIFF "$WORK/one" "$WORK/five" > "$WORK/one-five.out"
expect_eq "one secret or five: detdiff says identical" 0 $?

# Without its start-up hook Python cannot tell secrets apart: all real, said once.
$DETRUN -t "$WORK/isolated" -- $PY -I -c 'import os; print(os.urandom(8).hex())' \
    > "$WORK/iso1" 2> "$WORK/iso.err"
$DETRUN -- $PY -I -c 'import os; print(os.urandom(8).hex())' > "$WORK/iso2" 2> /dev/null
expect_ne "python -I: entropy is real" "$(cat "$WORK/iso1")" "$(cat "$WORK/iso2")"
expect_grep "python -I: the notice" "^detshim: python3[.0-9]* started with -I: the Python start-up hook cannot run" "$WORK/iso.err"
expect_lines "python -I: said once" 1 "$WORK/iso.err"
$DETDIFF --show "$WORK/isolated" > "$WORK/isolated.show"
expect_grep "python -I: the header records it" \
    "entropy_rule = real: python3[.0-9]* started with -I, so the start-up hook cannot run" \
    "$WORK/isolated.show"
$DETRUN -- $PY -c 'import os; print(os.urandom(8).hex())' -I > "$WORK/late1" 2> "$WORK/late.err"
$DETRUN -- $PY -c 'import os; print(os.urandom(8).hex())' -I > "$WORK/late2"
expect_eq "python -c CODE -I: the -I is the program's argument, entropy pinned" \
    "$(cat "$WORK/late1")" "$(cat "$WORK/late2")"
expect_lines "python -c CODE -I: no notice" 0 "$WORK/late.err"

# mktemp -u names are unique names, not training randomness.
expect_ne "mktemp -u under detrun: two runs, two names" "$($DETRUN -- mktemp -u)" "$($DETRUN -- mktemp -u)"
# A policy adds never-pin programs; the built-in ones cannot be removed.
printf 'include = default\n[rng]\nnever_pin_programs = rng_prog\n' > "$WORK/never.policy"
a=$($DETRUN -p "$WORK/never.policy" -- $PROGS/rng_prog urandom)
b=$($DETRUN -p "$WORK/never.policy" -- $PROGS/rng_prog urandom)
expect_ne "[rng] never_pin_programs adds a program" "$a" "$b"
$DETRUN -p "$WORK/never.policy" --explain > "$WORK/never.explain"
expect_grep "--explain lists the never-pin programs" \
    "^\[rng\] never pin ssh, ssh-keygen,.*mktemp, rng_prog$" "$WORK/never.explain"

# A policy is code a verifier runs: it may only set determinism switches.
# policy_refused WHAT LINES PATTERN [LINENO]: a policy whose [env] holds
# LINES stops the program before it starts, with one line naming
# file:line (line 3 unless LINENO says otherwise).
policy_refused() {
    printf 'include = default\n[env]\n%s\n' "$2" > "$WORK/bad.policy"
    $DETRUN -p "$WORK/bad.policy" -- $PY -c 'print("ran")' > "$WORK/bad.out" 2> "$WORK/bad.err"
    expect_eq "$1: exit status" 2 $?
    expect_eq "$1: the program did not run" "" "$(cat "$WORK/bad.out")"
    expect_grep "$1: message names file:line" "^detshim: $WORK/bad.policy:${4:-3}: $3" "$WORK/bad.err"
    expect_lines "$1: one line" 1 "$WORK/bad.err"
}
policy_refused "PYTHONPATH" "PYTHONPATH = /tmp/evil" '\[env\] cannot set PYTHONPATH: '
policy_refused "PATH" "PATH = /tmp/evil" '\[env\] cannot set PATH: '
policy_refused "LD_LIBRARY_PATH" "LD_LIBRARY_PATH = /tmp/evil" '\[env\] cannot set LD_LIBRARY_PATH: '
policy_refused "GLIBC_TUNABLES" "GLIBC_TUNABLES = glibc.malloc.check=3" '\[env\] cannot set GLIBC_TUNABLES: '
policy_refused "BASH_ENV" "BASH_ENV = /tmp/evil.sh" '\[env\] cannot set BASH_ENV: '
policy_refused "an unknown variable" "MY_SETTING = 1" '\[env\] MY_SETTING is not a known determinism switch'
policy_refused "an unknown XLA flag" "XLA_FLAGS += --xla_dump_to=/tmp/x" \
    "\[env\] XLA_FLAGS: flag '--xla_dump_to=/tmp/x' is not a known determinism switch"
policy_refused "PATH under unsafe = yes" "unsafe = yes
PATH = /tmp/evil" '\[env\] cannot set PATH: ' 4
# unsafe = yes lets an unknown variable through, with a warning line.
printf 'include = default\n[env]\nunsafe = yes\nMY_SETTING = 1\n' > "$WORK/unsafe.policy"
out=$($DETRUN -p "$WORK/unsafe.policy" -- $PY -c 'import os; print(os.environ["MY_SETTING"])')
expect_eq "unsafe = yes: the variable is set" 1 "$out"
$DETRUN -p "$WORK/unsafe.policy" --explain > "$WORK/unsafe.explain"
expect_grep "unsafe = yes: --explain warns" \
    "^warning: MY_SETTING is not a known determinism switch; the policy sets it under unsafe = yes \(unsafe.policy \[env\] MY_SETTING = 1\)" \
    "$WORK/unsafe.explain"
# A NUL byte would hide the rest of its line from the parser's checks.
printf 'include = default\n[rng]\n# looks like a comment\000\nseed = 77\n' > "$WORK/nul.policy"
$DETRUN -p "$WORK/nul.policy" -- $PY -c 'print("ran")' > "$WORK/nul.out" 2> "$WORK/nul.err"
expect_eq "NUL byte in a policy: exit status" 2 $?
expect_grep "NUL byte in a policy: message" \
    "^detshim: $WORK/nul.policy:3: control character 0x00 at column 23" "$WORK/nul.err"
finish
