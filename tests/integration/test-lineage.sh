#!/bin/sh
# What a process under the shim inherits is the same in every run: a
# program that prints or hashes its environment (its children's too) must
# not see a pid. The names still tell a spawn from an exec. Children
# started at once may take each other's names; detdiff says so.
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
# Two children whose start order differs between runs, as concurrent
# ones' may: forked (main.f<k>), and spawned by a shell (main.s<k>).
P=$PROGS/procs_prog
shim "$WORK/fa" $P forks 1 2 > /dev/null
shim "$WORK/fb" $P forks 2 1 > /dev/null
$DETDIFF "$WORK/fa" "$WORK/fb" > "$WORK/forks.diff"
expect_eq "forked children in the other order: detdiff says diverged" 1 $?
expect_grep "forked children that swapped names: one hint naming both" \
    "^  hint: run A's main\.f1 looks like run B's main\.f2 and run A's main\.f2 like run B's main\.f1: the children were probably spawned concurrently and swapped names$" \
    "$WORK/forks.diff"
expect_eq "the hint is said once" 1 "$(grep -c 'hint:' "$WORK/forks.diff")"
$DETDIFF --json "$WORK/fa" "$WORK/fb" > "$WORK/forks.json"
expect_eq "--json: each swapped child names the one it looks like" "main.f1 main.f2; main.f2 main.f1" \
    "$(python3 -c 'import json,sys
d = json.load(open(sys.argv[1]))
print("; ".join(sorted({x["process"] + " " + x["swapped_with"] for x in d["divergences"] if "swapped_with" in x})))' "$WORK/forks.json")"
shim "$WORK/sa" sh -c "$P data 1; $P data 2" > /dev/null
shim "$WORK/sb" sh -c "$P data 2; $P data 1" > /dev/null
$DETDIFF "$WORK/sa" "$WORK/sb" > "$WORK/spawns.diff"
expect_grep "spawned children that swapped names: the hint names both" \
    "^  hint: run A's main\.s1 looks like run B's main\.s2 and run A's main\.s2 like run B's main\.s1: " \
    "$WORK/spawns.diff"
# Images those children exec'd into (main.f<k>.e) that swapped names.
shim "$WORK/ea" $P forkexec 1 2 > /dev/null
shim "$WORK/eb" $P forkexec 2 1 > /dev/null
$DETDIFF "$WORK/ea" "$WORK/eb" > "$WORK/execs.diff"
expect_grep "exec'd images that swapped names: the hint names both" \
    "^  hint: run A's main\.f1\.e looks like run B's main\.f2\.e and run A's main\.f2\.e like run B's main\.f1\.e: " \
    "$WORK/execs.diff"
expect_no_grep "exec'd images: their parents, which match, are not diverged" \
    "^process main\.f1: diverged" "$WORK/execs.diff"
# Children that differ for another reason are not called swapped.
shim "$WORK/fc" $P forks 3 4 > /dev/null
$DETDIFF "$WORK/fa" "$WORK/fc" > "$WORK/other.diff"
expect_eq "children with other data: diverged" 1 $?
expect_no_grep "children with other data: no swap hint" 'hint:' "$WORK/other.diff"
$DETDIFF --json "$WORK/fa" "$WORK/fc" > "$WORK/other.json"
expect_no_grep "children with other data: no swapped_with in --json" 'swapped_with' "$WORK/other.json"
finish
