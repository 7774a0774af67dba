#!/bin/sh
# A trace directory that fills up (a 1 MiB tmpfs): the program finishes
# with its full output, one line says tracing stopped, and the file itself
# says it is incomplete and why, so detdiff never takes it for a whole run.
. "$(dirname "$0")/lib.sh"
P=$PROGS/blas_prog
MNT=$WORK/small
mkdir -p "$MNT"
# Not root: the test runs again in a user and mount namespace of its own,
# where a tmpfs may be mounted.
if ! mount -t tmpfs -o size=1m,mode=700 detshim-test "$MNT" 2> "$WORK/mount.err"; then
    if [ -z "${DETSHIM_TEST_USERNS:-}" ] && unshare -Urm true 2> /dev/null; then
        DETSHIM_TEST_USERNS=1 exec unshare -Urm "$0"
    fi
    skip "cannot mount a tmpfs here ($(head -1 "$WORK/mount.err"))"
fi
trap 'umount "$MNT" 2> /dev/null' EXIT

want=$(LD_PRELOAD=$SHIM $P repeat 2000)
LD_PRELOAD=$SHIM DETSHIM_TRACE=$WORK/whole $P repeat 2000 > /dev/null
for mode in fail warn; do
    LD_PRELOAD=$SHIM DETSHIM_TRACE=$MNT/$mode DETSHIM_ON_ERROR=$mode $P repeat 2000 \
        > "$WORK/$mode.out" 2> "$WORK/$mode.err"
    expect_eq "full disk, ON_ERROR=$mode: the program's exit status" 0 $?
    expect_eq "full disk, ON_ERROR=$mode: its full output" "$want" "$(cat "$WORK/$mode.out")"
    expect_grep "full disk, ON_ERROR=$mode: one line says why" \
        "^detshim: the trace of process main in $MNT/$mode is incomplete: cannot write: No space left on device \\(ENOSPC\\)" \
        "$WORK/$mode.err"
    expect_lines "full disk, ON_ERROR=$mode: only that line" 1 "$WORK/$mode.err"
    $DETDIFF --root "$MNT/$mode" > /dev/null 2> "$WORK/$mode.diff"
    expect_ne "full disk, ON_ERROR=$mode: detdiff --root does not vouch for it" 0 $?
    expect_grep "full disk, ON_ERROR=$mode: detdiff says incomplete (ENOSPC)" \
        'marked it incomplete: cannot write: No space left on device \(ENOSPC\)' "$WORK/$mode.diff"
    $DETDIFF "$WORK/whole" "$MNT/$mode" > "$WORK/$mode.cmp" 2>&1
    expect_eq "full disk, ON_ERROR=$mode: detdiff against a whole run: diverged" 1 $?
    expect_grep "full disk, ON_ERROR=$mode: detdiff says the file is incomplete (ENOSPC)" \
        "^  truncated: run B's file .* is incomplete: the writer marked it incomplete: cannot write: No space left on device \\(ENOSPC\\)" \
        "$WORK/$mode.cmp"
    rm -rf "$MNT/$mode"
done
finish
