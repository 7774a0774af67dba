#!/bin/sh
# make sanitize in small, so that CI catches a regression: every unit test
# and four C integration tests (OpenBLAS calls, start-up errors, a
# nondeterministic fake BLAS, illegal BLAS arguments) on the shim built
# with ASan+UBSan, the ASan runtime preloaded ahead of it. Any report,
# leaks included, or any failing test fails this one. Skipped, with the
# reason, where the compiler has no ASan runtime.
# slow: 370
. "$(dirname "$0")/lib.sh"
CC_SAN=${CC:-cc}
RT=$($CC_SAN -print-file-name=libasan.so)
[ -f "$RT" ] || skip "$CC_SAN has no ASan runtime (libasan.so): install libasan (Debian: libasan8)"

env -u MAKEFLAGS -u MAKELEVEL timeout -s KILL 1200 "$TOP/scripts/run-sanitize.sh" \
    test-c-openblas test-errors test-fake-blas test-blas-args > "$WORK/run.log" 2>&1
rc=$?
expect_eq "run-sanitize.sh: exit status (log: $WORK/run.log)" 0 $rc
[ $rc -eq 0 ] || tail -30 "$WORK/run.log" | sed 's/^/    /' >&2
expect_grep "the unit tests ran under the sanitizers" '^sanitize unit: == .*test_trace.*PASSED' \
    "$WORK/run.log"
expect_grep "the four C tests passed under the sanitizers" '^integration: 4 of 4 passed' \
    "$WORK/run.log"
expect_no_grep "no sanitizer report" '^sanitize: reports in' "$WORK/run.log"
finish
