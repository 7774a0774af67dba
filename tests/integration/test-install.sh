#!/bin/sh
# `make install` honours PREFIX and DESTDIR, and the installed library finds
# its policies by name next to itself, like the build tree's does. The
# installed reader API links: a program using include/detshim.h builds with
# pkg-config alone and reads a real trace.
. "$(dirname "$0")/lib.sh"
ROOT=$WORK/root
make -s -C "$TOP" install DESTDIR="$ROOT" PREFIX=/opt/ds > "$WORK/install.out" 2>&1
expect_eq "make install exit" 0 $?
for f in lib/libdetshim.so lib/libdetshim-audit.so bin/detdiff bin/detrun bin/detcheck share/detshim/policies/default.policy \
    share/detshim/policies/pytorch.policy share/detshim/policies/python/sitecustomize.py \
    share/detshim/policies/python/detshim_steps.py \
    lib/pkgconfig/detshim.pc include/detshim.h include/detshim/trace_format.h \
    lib/libdetshim-reader.so.0 lib/libdetshim-reader.so; do
    if [ -f "$ROOT/opt/ds/$f" ]; then pass; else fail "not installed: /opt/ds/$f"; fi
done
expect_grep "pkg-config file names the prefix" '^prefix=/opt/ds$' "$ROOT/opt/ds/lib/pkgconfig/detshim.pc"

LD_PRELOAD=$ROOT/opt/ds/lib/libdetshim.so DETSHIM_POLICY=default DETSHIM_TRACE=$WORK/a \
    $PROGS/blas_prog > /dev/null 2> "$WORK/err"
expect_eq "installed library with a policy by name: exit" 0 $?
expect_lines "installed library: quiet" 0 "$WORK/err"
LD_PRELOAD=$ROOT/opt/ds/lib/libdetshim.so DETSHIM_TRACE=$WORK/b $PROGS/blas_prog > /dev/null
"$ROOT/opt/ds/bin/detdiff" "$WORK/a" "$WORK/b" > "$WORK/dd.out"
expect_eq "installed detdiff: identical" 0 $?

# One run traced by the build tree's detshim and by the same library
# installed at another prefix has one root: the Python sites of detshim's
# own start-up hook (a step record's) are named from the hook's folder, as
# any file is from its sys.path entry, not by where detshim is installed.
if $PY -c 'import torch' 2> /dev/null; then
    "$TOP/scripts/detrun" -p pytorch -t "$WORK/tree" -- $PY "$TOP/tests/programs/torch_prog.py" 3 \
        > "$WORK/tree.out" 2>&1
    "$ROOT/opt/ds/bin/detrun" -p pytorch -t "$WORK/inst" -- $PY "$TOP/tests/programs/torch_prog.py" 3 \
        > "$WORK/inst.out" 2>&1
    expect_eq "a training with step records: one root from the tree and from /opt/ds" \
        "$("$TOP/build/detdiff" --root "$WORK/tree")" "$("$TOP/build/detdiff" --root "$WORK/inst")"
    "$TOP/build/detdiff" --show "$WORK/inst" > "$WORK/inst.show"
    expect_grep "a step record's Python site: the hook's file by its name alone" \
        '^ +[0-9]+ framework\.step .*\| python detshim_steps\.py:[0-9]+ in ' "$WORK/inst.show"
else
    skip_check "the same root from another prefix" "no torch for $PY (Debian's python3-torch)"
fi

# The reader library exports exactly the functions the header declares.
LIBDIR=$ROOT/opt/ds/lib
nm -D --defined-only "$LIBDIR/libdetshim-reader.so.0" | awk '{ print $3 }' | sort > "$WORK/exported"
grep -o '^DETSHIM_API [^(]*(' "$ROOT/opt/ds/include/detshim.h" | sed 's/.*[ *]\([a-z0-9_]*\)($/\1/' |
    sort > "$WORK/declared"
expect_eq "reader library exports the header's functions and nothing else" \
    "$(cat "$WORK/declared")" "$(cat "$WORK/exported")"
readelf -d "$LIBDIR/libdetshim-reader.so.0" > "$WORK/dyn"
expect_grep "reader library has a versioned soname" 'SONAME.*\[libdetshim-reader\.so\.0\]' "$WORK/dyn"
ldd "$ROOT/opt/ds/bin/detdiff" > "$WORK/ldd"
expect_grep "installed detdiff reads through the installed reader library" \
    "libdetshim-reader\.so\.0 => $ROOT/opt/ds/(bin/\.\./)?lib/libdetshim-reader\.so\.0" "$WORK/ldd"
flags=$(PKG_CONFIG_SYSROOT_DIR=$ROOT PKG_CONFIG_LIBDIR=$LIBDIR/pkgconfig \
    pkg-config --cflags --libs detshim)
# shellcheck disable=SC2086
expect_eq "pkg-config --cflags --libs detshim" "-I$ROOT/opt/ds/include -L$LIBDIR -ldetshim-reader" \
    "$(echo $flags)"
# shellcheck disable=SC2086
cc -std=c11 -Wall -Wextra -Werror -o "$WORK/reader_tool" "$TOP/tests/install/reader_tool.c" $flags \
    2> "$WORK/cc.err"
expect_eq "a program using the installed header compiles and links with pkg-config" 0 $?
LD_LIBRARY_PATH=$LIBDIR "$WORK/reader_tool" "$WORK/a" > "$WORK/tool.out"
expect_eq "the program reads a real trace" 0 $?
root=$("$ROOT/opt/ds/bin/detdiff" --root "$WORK/a")
expect_grep "the program sees one process, its records and detdiff's root" "^1 [1-9][0-9]* $root$" \
    "$WORK/tool.out"
# The header is usable from C++ too (extern "C"), where a C++ compiler is.
if command -v c++ > /dev/null; then
    # shellcheck disable=SC2086
    c++ -Wall -Wextra -Werror -x c++ -o "$WORK/reader_tool_cxx" "$TOP/tests/install/reader_tool.c" \
        $flags 2> "$WORK/cxx.err"
    expect_eq "the same program compiles and links as C++" 0 $?
    expect_eq "the C++ build reads the trace alike" "$(cat "$WORK/tool.out")" \
        "$(LD_LIBRARY_PATH=$LIBDIR "$WORK/reader_tool_cxx" "$WORK/a")"
fi

# The installed scripts find the installed library and detdiff.
"$ROOT/opt/ds/bin/detrun" --explain > "$WORK/explain.out"
expect_grep "installed detrun --explain reads the installed policy" \
    "^policy files +$ROOT/opt/ds/share/detshim/policies/default.policy$" "$WORK/explain.out"
# The pytorch policy's start-up hook is the installed one, compiled, and
# torch's deterministic algorithms come on.
ls "$ROOT"/opt/ds/share/detshim/policies/python/__pycache__/sitecustomize.*.pyc > /dev/null 2>&1
expect_eq "installed start-up hook is compiled" 0 $?
on=$("$ROOT/opt/ds/bin/detrun" -p pytorch -- $PY -c 'import sys, torch; print(torch.are_deterministic_algorithms_enabled())' 2>&1)
expect_eq "installed detrun -p pytorch: deterministic algorithms on" "True" "$on"
hook=$("$ROOT/opt/ds/bin/detrun" -p pytorch -- /bin/sh -c 'echo "$PYTHONPATH"')
expect_eq "installed detrun -p pytorch: the installed hook on PYTHONPATH" \
    "$ROOT/opt/ds/share/detshim/policies/python" "$hook"
audit=$("$ROOT/opt/ds/bin/detrun" /bin/sh -c 'echo "$LD_AUDIT"')
expect_eq "installed detrun: the installed audit module on LD_AUDIT" \
    "$ROOT/opt/ds/lib/libdetshim-audit.so" "$audit"
# Every installed command answers --help and --version (the release's
# version, as detshim.pc states it) and has its man page.
version=$(sed -n 's/^Version: //p' "$LIBDIR/pkgconfig/detshim.pc")
for cmd in detdiff detrun detcheck; do
    "$ROOT/opt/ds/bin/$cmd" --help > "$WORK/$cmd.help" 2> "$WORK/$cmd.err"
    expect_eq "installed $cmd --help: exit" 0 $?
    expect_lines "installed $cmd --help: nothing on stderr" 0 "$WORK/$cmd.err"
    expect_grep "installed $cmd --help points at its page" "^See $cmd\(1\)\.$" "$WORK/$cmd.help"
    "$ROOT/opt/ds/bin/$cmd" --version > "$WORK/$cmd.version"
    expect_eq "installed $cmd --version: exit" 0 $?
    expect_grep "installed $cmd --version: the release" "^$cmd $version( |$)" "$WORK/$cmd.version"
    cmp -s "$TOP/docs/man/$cmd.1" "$ROOT/opt/ds/share/man/man1/$cmd.1"
    expect_eq "installed man page share/man/man1/$cmd.1" 0 $?
done
# --help needs nothing built: a copy with no library or detdiff beside it.
mkdir -p "$WORK/alone"
cp "$TOP/scripts/detrun" "$TOP/scripts/detcheck" "$WORK/alone/"
for cmd in detrun detcheck; do
    "$WORK/alone/$cmd" --help > /dev/null 2>&1
    expect_eq "$cmd --help with nothing built beside it: exit" 0 $?
done
"$ROOT/opt/ds/bin/detcheck" $PROGS/blas_prog > "$WORK/check.out"
expect_eq "installed detcheck: exit" 0 $?
expect_grep "installed detcheck: verdict" "^reproducible: [0-9a-f]{64}$" "$WORK/check.out"
finish
