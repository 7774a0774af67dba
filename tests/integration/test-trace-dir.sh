#!/bin/sh
# The trace directory is private: created 0700 with 0600 files (headers
# hold the command line); a symlink, another user's world-writable
# directory or one others can write is refused with one line; a file
# planted at a child's name is stepped over (a provisional spawn number)
# or named (a settled name).
. "$(dirname "$0")/lib.sh"
P=$PROGS/blas_prog

shim "$WORK/new/run" $P > /dev/null
expect_eq "a new trace directory is 0700" 700 "$(stat -c %a "$WORK/new/run")"
expect_eq "its trace file is 0600" 600 "$(stat -c %a "$WORK/new/run/main.dtrace")"
# A lab that shares traces with its group says so in the policy.
printf 'include = default\n[trace]\nreadable_by = group\n' > "$WORK/group.policy"
(umask 022 && DETSHIM_POLICY=$WORK/group.policy shim "$WORK/shared/run" $P > /dev/null)
expect_eq "readable_by = group: the directory is 0750" 750 "$(stat -c %a "$WORK/shared/run")"
expect_eq "readable_by = group: its trace file is 0640" 640 "$(stat -c %a "$WORK/shared/run/main.dtrace")"

# refused WHAT PATTERN DIR: the program stops at start-up with one line.
refused() {
    shim "$3" $P > "$WORK/out" 2> "$WORK/err"
    expect_eq "$1: exit status" 2 $?
    expect_grep "$1: message" "$2" "$WORK/err"
    expect_lines "$1: one line" 1 "$WORK/err"
    expect_eq "$1: no trace written" "" "$(find -L "$3" -name '*.dtrace' 2> /dev/null)"
}

mkdir -m 700 "$WORK/real"
ln -s "$WORK/real" "$WORK/link"
refused "a symlinked trace directory" \
    "^detshim: DETSHIM_TRACE=$WORK/link is a symbolic link.*point DETSHIM_TRACE at the directory itself" \
    "$WORK/link"
mkdir "$WORK/open"
chmod 777 "$WORK/open"
refused "my own world-writable directory" \
    "^detshim: DETSHIM_TRACE=$WORK/open is writable by others \\(mode 0777\\); run chmod go-w" "$WORK/open"
mkdir "$WORK/group"
chmod 770 "$WORK/group"
refused "a group-writable directory" "is writable by its group \\(mode 0770\\)" "$WORK/group"

# Another user's world-writable directory (its owner could replace the
# trace after the run): needs a second uid, made here when we are root.
other=detshim-other
made_user=0
if [ "$(id -u)" -ne 0 ]; then
    echo "   SKIP another user's directory: not root, cannot make a second uid (not counted)"
elif ! id -u $other > /dev/null 2>&1 && ! { useradd -M -r -s /usr/sbin/nologin $other 2> /dev/null &&
        made_user=1; }; then
    echo "   SKIP another user's directory: useradd failed (not counted)"
else
    mkdir "$WORK/theirs"
    chown $other "$WORK/theirs"
    chmod 777 "$WORK/theirs"
    refused "another user's world-writable directory" \
        "^detshim: DETSHIM_TRACE=$WORK/theirs belongs to uid $(id -u $other), not to this user" \
        "$WORK/theirs"
    chmod 755 "$WORK/theirs"
    refused "another user's directory, even closed to others" "belongs to uid $(id -u $other)" \
        "$WORK/theirs"
    [ $made_user = 0 ] || userdel $other
fi

# Planted files (by the same user: no one else can write here). The shell
# is the run's first process and records nothing; blas_prog is its spawn.
shim "$WORK/plant1" sh -c ": > '$WORK/plant1/main.s1.dtrace'; $P" > /dev/null 2> "$WORK/p1.err"
expect_eq "a planted file at a provisional name: the program runs" 0 $?
expect_eq "a planted file at a provisional name: the next number is taken" \
    "main.s1.dtrace main.s2.dtrace" "$(cd "$WORK/plant1" && echo *)"
shim "$WORK/plant2" sh -c ": > '$WORK/plant2/main.s1.f1.dtrace'; $PROGS/procs_prog fork" \
    > /dev/null 2> "$WORK/p2.err"
expect_grep "a planted file at a forked child's name is named" \
    "^detshim: cannot create trace file $WORK/plant2/main.s1.f1.dtrace: a file of that name is already there" \
    "$WORK/p2.err"
expect_eq "the planted file is left as it was" 0 "$(stat -c %s "$WORK/plant2/main.s1.f1.dtrace")"
# A program started with stdin, stdout or stderr closed (joblib's loky
# workers, daemons): the shim's descriptors must not take those numbers,
# or Python finds its stdin to be the trace directory and stops, and a C
# program's output goes into its trace file.
shim "$WORK/closed0" sh -c "exec 0<&-; exec $PY -c 'import os, sys
os.urandom(8)
print(sys.stdin, [os.readlink(\"/proc/self/fd/%d\" % i) for i in (1, 2)])'" \
    > "$WORK/closed0.out" 2> "$WORK/closed0.err"
expect_eq "stdin closed: Python starts under the shim (exit status)" 0 $?
expect_grep "stdin closed: Python sees no stdin, not the trace directory" '^None \[' \
    "$WORK/closed0.out"
expect_no_grep "stdin closed: no complaint about stdin" 'stdin' "$WORK/closed0.err"
shim "$WORK/closed012" sh -c "exec 0<&- 1>&- 2>&-; exec $P"
expect_eq "stdin, stdout and stderr closed: the program runs (exit status)" 0 $?
$DETDIFF --root "$WORK/closed012" > /dev/null 2> "$WORK/closed012.err"
expect_eq "stdin, stdout and stderr closed: the trace is whole (detdiff --root)" 0 $?
shim "$WORK/open012" $P > /dev/null
$DETDIFF "$WORK/open012" "$WORK/closed012" > "$WORK/closed012.diff"
expect_eq "stdin, stdout and stderr closed: the same records as a run with them open" 0 $?
finish
