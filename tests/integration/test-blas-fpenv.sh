#!/bin/sh
# The shim leaves the FP environment as it found it: a rejected dgemm_
# with a subnormal alpha, traced, leaves the FE_* flags and the x86
# denormal flag (MXCSR DE) as the untraced call leaves them, and so do
# valid traced calls: an empty one (m = 0) that the vendor returns from
# before reading alpha, and ones whose own flags (inexact) stay.
. "$(dirname "$0")/lib.sh"
P=$PROGS/blas_args
$P fpflags > "$WORK/plain.out" 2>/dev/null
expect_grep "untraced: the vendor's computation raises inexact" '^inexact: fe=0x20 ' "$WORK/plain.out"
# So a traced rejected call, equal to it below, leaves the flags unchanged.
expect_grep "untraced: a rejected call raises no flag" '^rejected: fe=0 de=0$' "$WORK/plain.out"
for policy in passthrough pinned default; do
    pol=$policy
    [ "$policy" = pinned ] && pol=$WORK/pinned.policy && printf '[blas]\nmode = pinned\n' > "$pol"
    DETSHIM_POLICY=$pol shim "$WORK/t-$policy" $P fpflags > "$WORK/$policy.out" 2>/dev/null
    for what in rejected empty valid inexact; do
        expect_eq "$what dgemm_ traced ($policy): flags as untraced" \
            "$(grep "^$what:" "$WORK/plain.out")" "$(grep "^$what:" "$WORK/$policy.out")"
    done
done
finish
