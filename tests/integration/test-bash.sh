#!/bin/sh
# bash exports its own getenv and setenv: the shim must still read every
# DETSHIM_* variable and set the policy's, with bash as the traced program
# and as /bin/sh under detrun (Fedora, RHEL and Arch ship it so).
. "$(dirname "$0")/lib.sh"
BASH=$(command -v bash) || skip "bash is not installed"

LD_PRELOAD=$SHIM DETSHIM_POLICY=nosuch "$BASH" -c : 2> "$WORK/err"
expect_eq "bash -c under an unknown policy: exit status" 2 $?
expect_grep "bash -c under an unknown policy: message" '^detshim: DETSHIM_POLICY=nosuch' "$WORK/err"

LD_PRELOAD=$SHIM DETSHIM_EXPLAIN=1 "$BASH" -c : > "$WORK/explain" 2>&1
expect_grep "DETSHIM_EXPLAIN read in bash" '^policy +default$' "$WORK/explain"

# The policy's variables reach bash's own table (bash's main imports the
# environ the constructor left) and so its children.
out=$(OMP_NUM_THREADS=3 LD_PRELOAD=$SHIM "$BASH" -c 'echo "$OMP_NUM_THREADS"; env' | 
      grep -E '^(OMP_NUM_THREADS=|[0-9]+$)' | tr '\n' ' ')
expect_eq "the policy's OMP_NUM_THREADS in bash and its child" "1 OMP_NUM_THREADS=1 " "$out"

"$BASH" "$TOP/scripts/detrun" --explain > "$WORK/detrun-bash" 2>&1
expect_grep "bash scripts/detrun --explain prints the policy" '^policy +default$' "$WORK/detrun-bash"

# detrun's own /bin/sh as bash, in a mount namespace of its own.
if unshare -m true 2> /dev/null; then
    unshare -m sh -c "mount --bind '$BASH' /bin/sh && /bin/sh --version | head -1 &&
        /bin/sh '$TOP/scripts/detrun' --explain &&
        OMP_NUM_THREADS=3 /bin/sh '$TOP/scripts/detrun' sh -c 'echo OMP=\$OMP_NUM_THREADS'" \
        > "$WORK/binsh" 2>&1
    expect_grep "/bin/sh is bash in the namespace" 'GNU bash' "$WORK/binsh"
    expect_grep "detrun --explain with bash as /bin/sh prints the policy" '^policy +default$' \
        "$WORK/binsh"
    expect_grep "detrun with bash as /bin/sh pins OMP_NUM_THREADS" '^OMP=1$' "$WORK/binsh"
else
    skip_check "/bin/sh as bash under detrun" "unshare -m is not permitted here"
fi
finish
