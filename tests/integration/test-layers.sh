#!/bin/sh
# The house keeps its shape (docs/HACKING.md): the shim's modules form
# layers with no circle, read off the objects' own symbol tables; no
# source file of shim/ is past 800 lines; the generated BLAS wrappers stay
# thin (at most a third of the 24,034 lines they once were).
. "$(dirname "$0")/lib.sh"
$PY "$TOP/scripts/check-layers.py" "$TOP/build/obj" > "$WORK/layers.out" 2>&1
expect_eq "modules: no circle between them (nm)" 0 $?
expect_grep "every module of the preloaded library was read" "^check-layers: [0-9]+ modules, no circle$" \
    "$WORK/layers.out"
expect_grep "core depends on no other module" "^core +-> \(libraries only\)$" "$WORK/layers.out"
# Framework records sit on the trace, and on cuda's device digests for
# tensors on the GPU (framework_cuda.c); nothing below depends on them.
expect_grep "framework records sit on the trace and the device digests" \
    "^framework +-> core, cuda, trace$" "$WORK/layers.out"
expect_no_grep "no module depends on the framework records" "^[a-z]+ +-> .*framework" "$WORK/layers.out"
long=$(find "$TOP/shim" -name '*.[ch]' -o -name '*.inc' | xargs wc -l | awk '$2 != "total" && $1 > 800 {print $2 ": " $1}')
expect_eq "no file of shim/ over 800 lines" "" "$long"
gen=$(wc -l < "$TOP/build/gen/blas_wrappers.c")
if [ "$gen" -le 8011 ]; then pass; else fail "generated BLAS wrappers: $gen lines, over 8,011"; fi
# The shim's own names carry module prefixes: core.h compiles beside <syslog.h>.
printf '#include <syslog.h>\n#include "core/core.h"\nint main(void) { return DS_LOG_INFO - LOG_INFO; }\n' \
    > "$WORK/syslog.c"
cc -D_GNU_SOURCE -I"$TOP/include" -I"$TOP/shim" -c -o "$WORK/syslog.o" "$WORK/syslog.c" 2> "$WORK/syslog.err"
expect_eq "core.h and <syslog.h> in one file compile" 0 $?
# include/ holds only what make install ships.
expect_eq "include/: only the installed headers" "detshim.h detshim/trace_format.h" \
    "$(cd "$TOP/include" && find . -name '*.h' | sed 's|^\./||' | sort | tr '\n' ' ' | sed 's/ $//')"
finish
