#!/bin/sh
# The man pages (docs/man/*.1) render without a single warning, with
# `man -l` where man is installed, else groff or mandoc; with none of them
# the test says SKIP and why.
. "$(dirname "$0")/lib.sh"
if command -v man > /dev/null; then
    render() { MANWIDTH=80 man --warnings -E UTF-8 -l "$1"; }
elif command -v groff > /dev/null; then
    render() { groff -man -ww -Tutf8 "$1"; }
elif command -v mandoc > /dev/null; then
    render() { mandoc -W warning,stop "$1"; }
else
    skip "no man, groff or mandoc to render docs/man/*.1 with (apt-get install man-db)"
fi
for cmd in detdiff detrun detcheck detverify; do
    page=$TOP/docs/man/$cmd.1
    render "$page" > "$WORK/$cmd.raw" 2> "$WORK/$cmd.err"
    expect_eq "$cmd.1 renders" 0 $?
    # Bold and underline come as overstrikes (c BACKSPACE c); read the text.
    sed 's/.\x08//g' "$WORK/$cmd.raw" > "$WORK/$cmd.txt"
    expect_lines "$cmd.1 renders without warnings" 0 "$WORK/$cmd.err"
    expect_grep "$cmd.1 has its NAME line" "^ +$cmd - " "$WORK/$cmd.txt"
    # Every option the command's --help names is in its page.
    if [ -f "$TOP/scripts/$cmd" ]; then help=$TOP/scripts/$cmd; else help=$TOP/build/$cmd; fi
    "$help" --help > "$WORK/$cmd.help"
    for opt in $(grep -oE -- '(^| |\[)--?[a-z][a-z-]*' "$WORK/$cmd.help" | tr -d ' [' | sort -u); do
        expect_grep "$cmd.1 documents $opt" "(^|[[ ,])$opt([] ,]|$)" "$WORK/$cmd.txt"
    done
done
finish
