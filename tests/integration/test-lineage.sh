#!/bin/sh
# What a process under the shim inherits is the same in every run: a
# program that prints or hashes its environment (its children's too) must
# not see a pid. The names still tell a spawn from an exec.
. "$(dirname "$0")/lib.sh"

envs() {
    shim "$1" sh -c 'env; sh -c "env; exec env"' | grep -v '^DETSHIM_TRACE=' | sort
}
envs "$WORK/a" > "$WORK/a.env"
envs "$WORK/b" > "$WORK/b.env"
expect_eq "two runs: the same environments, byte for byte" "$(cksum < "$WORK/a.env")" \
    "$(cksum < "$WORK/b.env")"
expect_no_grep "no pid in DETSHIM_LINEAGE" '^DETSHIM_LINEAGE=.*[0-9]{2,}' "$WORK/a.env"
expect_grep "a shell's child is its spawn" '^DETSHIM_LINEAGE=main\.s1::$' "$WORK/a.env"
# The shell recorded nothing, so the image it execs into keeps its name.
expect_eq "an exec keeps the process's name" 2 "$(grep -c '^DETSHIM_LINEAGE=main\.s1::$' "$WORK/a.env")"
finish
