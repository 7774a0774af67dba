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
long=$(find "$TOP/shim" -name '*.[ch]' -o -name '*.inc' | xargs wc -l | awk '$2 != "total" && $1 > 800 {print $2 ": " $1}')
expect_eq "no file of shim/ over 800 lines" "" "$long"
gen=$(wc -l < "$TOP/build/gen/blas_wrappers.c")
if [ "$gen" -le 8011 ]; then pass; else fail "generated BLAS wrappers: $gen lines, over 8,011"; fi
finish
