#!/bin/sh
# detverify: one verdict on a published run. Crafted runs (mktrace.py
# --verify, written from the format and the writer's record schema) give
# each kind of difference against a re-run trace given with --rerun-trace;
# real runs of a small C program and a small Python trainer under detrun
# check the whole path, re-run included. Also signatures, segment chains,
# custom policies, and hostile attestations.
#
#   tests/integration/test-verify.sh        from the repository root, after make
. "$(dirname "$0")/lib.sh"

DV=$TOP/build/detverify
DETRUN=$TOP/scripts/detrun
if [ ! -x "$DV" ]; then
    echo "test-verify: $DV is missing; run make first" >&2
    exit 2
fi
if ! "$PY" "$TOP/tests/integration/mktrace.py" --verify "$WORK/tr"; then
    echo "test-verify: mktrace.py could not write the test traces" >&2
    exit 2
fi
V=$WORK/tr/verify
OUT=$WORK/out
ERR=$WORK/err
# Re-runs leave their traces here, not in the shared /tmp.
export TMPDIR=$WORK/tmp
mkdir -p "$TMPDIR"

# dv ARGS...: runs detverify; stdout in $OUT, stderr in $ERR, status in $rc.
dv() {
    "$DV" "$@" >"$OUT" 2>"$ERR"
    rc=$?
}

# attest DIR [ARGS...]: writes DIR/attestation.json or fails the test.
attest() {
    d=$1
    shift
    if ! "$DV" --attest "$d" "$@" >"$WORK/attest.out" 2>&1; then
        fail "detverify --attest $d: $(cat "$WORK/attest.out")"
    fi
}

# verify_case CASE: attests the case's published trace and verifies it
# against the case's re-run.
verify_case() {
    attest "$V/$1/pub/trace"
    dv "$V/$1/pub/trace" --rerun-trace "$V/$1/rerun"
}

# expect_verdict WHAT PATTERN: the last line of stdout matches PATTERN.
expect_verdict() {
    tail -n 1 "$OUT" > "$WORK/verdict"
    expect_grep "$1" "$2" "$WORK/verdict"
}

# expect_one_error WHAT PATTERN: exit 2, one "detverify: " line on stderr
# matching PATTERN, nothing on stdout.
expect_one_error() {
    expect_eq "$1: exit status" 2 "$rc"
    expect_lines "$1: one line on stderr" 1 "$ERR"
    expect_grep "$1: the line" "^detverify: .*$2" "$ERR"
    expect_lines "$1: nothing on stdout" 0 "$OUT"
}

test_identical_runs_verify() {
    verify_case identical
    expect_eq "identical: exit status" 0 "$rc"
    expect_verdict "identical: verdict" "^verified: "
    expect_grep "identical: the published file was checked" \
        "note: the published file .*weights.pt matches" "$OUT"
}

test_honest_trace_with_other_weights_is_not_verified_naming_the_file() {
    verify_case weights_swapped
    expect_eq "weights swapped: exit status" 1 "$rc"
    expect_verdict "weights swapped: verdict names the file" \
        "^not verified: the published weights.pt \(sha [0-9a-f]{64}\) is not what the published workflow produces \(re-run: sha [0-9a-f]{64}\)"
    expect_grep "weights swapped: the trace step says where they came from" \
        "the published trace matches the re-run, so the published weights were produced outside the published run" "$OUT"
}

test_a_run_that_wrote_other_weights_is_not_verified() {
    verify_case output_differs
    expect_eq "output differs: exit status" 1 "$rc"
    expect_verdict "output differs: verdict" "^not verified: the published weights.pt .* \(re-run: sha "
    expect_grep "output differs: the trace divergence is named" \
        "departs from the published trace: process main, thread 0, record 3" "$OUT"
}

test_other_data_is_not_verified_naming_the_input() {
    verify_case input_differs
    expect_eq "input differs: exit status" 1 "$rc"
    expect_verdict "input differs: verdict" \
        "^not verified: input data/train.csv differs: published sha [0-9a-f]{64}, re-run sha [0-9a-f]{64}$"
}

test_environment_is_named_before_outputs() {
    verify_case object_differs
    expect_eq "object differs: exit status" 1 "$rc"
    expect_verdict "object differs: the library comes first" \
        "^not verified: loaded object libopenblas.so.0 differs: published \"build-id:aa11\", re-run \"build-id:bb22\""
    expect_grep "object differs: the outputs are still reported" "differs: the published weights.pt" "$OUT"
}

test_each_bit_changing_environment_fact_fails() {
    verify_case python_differs
    expect_verdict "python: verdict" '^not verified: Python package numpy differs: published "1.24.2", re-run "2.4.0"'
    verify_case setting_differs
    expect_verdict "setting: verdict" '^not verified: setting OMP_NUM_THREADS differs: published "1" \(the policy\), re-run "2"'
    verify_case entropy_differs
    expect_verdict "entropy rule: verdict" "^not verified: process main's entropy rule differs"
    verify_case isa_and_trace_differ
    expect_verdict "isa and trace: verdict names the ISA first" \
        "^not verified: the CPU's instruction sets differ"
    expect_eq "isa and trace: exit status" 1 "$rc"
}

# A re-run on another instruction set that gives the published trace and
# outputs bit for bit: the workflow did produce them, and the ISA is a note.
test_another_isa_that_gives_the_same_run_verifies_with_a_note() {
    verify_case isa_differs
    expect_eq "isa, same run: exit status" 0 "$rc"
    expect_verdict "isa, same run: verdict" "^verified: "
    expect_grep "isa, same run: the difference is a note that says why" \
        "^  note: the CPU's instruction sets differ: .*, and on this CPU it gave the published trace and outputs bit for bit$" \
        "$OUT"
}

test_facts_that_cannot_change_bits_are_notes() {
    verify_case notes_only
    expect_eq "notes: exit status" 0 "$rc"
    expect_verdict "notes: verdict" "^verified: "
    expect_grep "notes: CPU model" '^  note: the CPU model differs.*"Test CPU 3000", re-run "Other CPU 2000"' "$OUT"
    expect_grep "notes: core count" "^  note: the core count differs.*published 2, re-run 64" "$OUT"
    expect_grep "notes: host" '^  note: the host name differs' "$OUT"
}

test_a_trace_divergence_is_named() {
    verify_case trace_differs
    expect_eq "trace differs: exit status" 1 "$rc"
    expect_verdict "trace differs: verdict" \
        "^not verified: the re-run departs from the published trace: process main, thread 0, record 2 \(dgemm_\): nondeterministic operation"
}

# A verifier working in the published folder: the re-run writes
# weights.pt there (here: the honest bytes), so the published file must
# be hashed before it runs.
test_published_files_are_hashed_before_the_rerun_overwrites_them() {
    if [ ! -x "$PROGS/blas_prog" ]; then
        skip "hashed before the re-run" "build/programs/blas_prog is not built"
        return
    fi
    cp -r "$V/weights_swapped" "$WORK/inplace"
    attest "$WORK/inplace/pub/trace"
    (cd "$WORK/inplace/pub" && "$DV" trace -- /bin/sh -c "printf W1 > weights.pt; exec $PROGS/blas_prog") \
        >"$OUT" 2>"$ERR"
    expect_eq "in place: the re-run did overwrite the file" "W1" "$(cat "$WORK/inplace/pub/weights.pt")"
    expect_grep "in place: the published bytes were compared" \
        "differs: the published weights.pt \(sha a296620f" "$OUT"
}

test_json_verdict_is_one_object() {
    attest "$V/weights_swapped/pub/trace"
    dv --json "$V/weights_swapped/pub/trace" --rerun-trace "$V/weights_swapped/rerun"
    expect_eq "json: exit status" 1 "$rc"
    got=$("$PY" -c 'import json,sys; d=json.load(open(sys.argv[1]))
print(d["verdict"], [f["kind"] for f in d["findings"] if f["fails"]][0], d["root_published"] == d["root_rerun"])' "$OUT" 2>&1)
    expect_eq "json: verdict, first failure, roots" "not_verified published_file_differs True" "$got"
}

test_attestation_is_stable() {
    attest "$V/identical/pub/trace"
    cp "$V/identical/pub/trace/attestation.json" "$WORK/att1.json"
    attest "$V/identical/pub/trace"
    if cmp -s "$WORK/att1.json" "$V/identical/pub/trace/attestation.json"; then pass; else
        fail "attestation: two writes of the same run differ"
    fi
    got=$("$PY" -c 'import json,sys; d=json.load(open(sys.argv[1]))
print(d["schema"], len(d["policy"]["files"]), d["outputs"][0]["path"], d["inputs"][0]["path"], d["objects"][0]["name"], d["cpu"]["cores"])' "$WORK/att1.json" 2>&1)
    expect_eq "attestation: schema and contents" \
        "detshim-attestation/1 1 weights.pt data/train.csv libc.so.6 2" "$got"
}

test_signatures() {
    if ! openssl genpkey -algorithm ed25519 -out "$WORK/lab.pem" 2>/dev/null ||
        ! openssl pkey -in "$WORK/lab.pem" -pubout -out "$WORK/lab.pub" 2>/dev/null ||
        ! openssl genpkey -algorithm ed25519 -out "$WORK/other.pem" 2>/dev/null ||
        ! openssl pkey -in "$WORK/other.pem" -pubout -out "$WORK/other.pub" 2>/dev/null; then
        skip "signatures" "the openssl command cannot make Ed25519 keys"
        return
    fi
    cp -r "$V/identical" "$WORK/signed"
    attest "$WORK/signed/pub/trace" --sign "$WORK/lab.pem"
    dv --pubkey "$WORK/lab.pub" "$WORK/signed/pub/trace" --rerun-trace "$WORK/signed/rerun"
    expect_eq "signature: a good one verifies" 0 "$rc"
    dv --pubkey "$WORK/other.pub" "$WORK/signed/pub/trace" --rerun-trace "$WORK/signed/rerun"
    expect_eq "signature: another key's is not verified" 1 "$rc"
    expect_verdict "signature: another key, named" "^not verified: the signature does not match"
    dv --pubkey "$WORK/lab.pem" "$WORK/signed/pub/trace" --rerun-trace "$WORK/signed/rerun"
    expect_one_error "signature: a private key given as public" "is not a PEM public key"
    sed 's/"host": "host-100"/"host": "host-999"/' "$WORK/signed/pub/trace/attestation.json" \
        > "$WORK/edited.json"
    mv "$WORK/edited.json" "$WORK/signed/pub/trace/attestation.json"
    dv --pubkey "$WORK/lab.pub" "$WORK/signed/pub/trace" --rerun-trace "$WORK/signed/rerun"
    expect_eq "signature: an edited attestation is not verified" 1 "$rc"
    rm "$WORK/signed/pub/trace/attestation.json.sig"
    dv --pubkey "$WORK/lab.pub" "$WORK/signed/pub/trace" --rerun-trace "$WORK/signed/rerun"
    expect_eq "signature: a missing one is not verified" 1 "$rc"
    expect_verdict "signature: missing, named" "^not verified: no usable signature"
}

test_segments_chain_and_a_broken_chain_is_named() {
    S=$V/segments
    for s in s1 s2 s3 s2_other s2_fresh; do attest "$S/$s"; done
    dv --chain "$S/s1" "$S/s2" "$S/s3"
    expect_eq "chain: three segments" 0 "$rc"
    expect_verdict "chain: verdict" "^verified: the 3 segments chain"
    dv --chain "$S/s1" "$S/s2_other" "$S/s3"
    expect_eq "chain: broken at 2" 1 "$rc"
    expect_verdict "chain: broken, named" \
        "^not verified: segment 2 started from ckpt.pt sha [0-9a-f]{64}, which segment 1 did not write \(it wrote sha [0-9a-f]{64}\)$"
    dv --chain "$S/s1" "$S/s2_fresh" "$S/s3"
    expect_verdict "chain: a fresh start, named" "^not verified: segment 2 read nothing that segment 1 wrote"
    dv --segment "$S/s1" --segment "$S/s2_other" -- /bin/true
    expect_eq "segments: a broken chain re-runs nothing" 1 "$rc"
    expect_no_grep "segments: nothing re-run" "^segment 1:" "$OUT"
}

test_hostile_attestations_give_one_line_and_exit_2() {
    mkdir -p "$WORK/h/empty"
    dv "$WORK/h/empty" --rerun-trace "$V/identical/rerun"
    expect_one_error "no attestation" "cannot open .*attestation.json"
    good=$V/identical/pub/trace/attestation.json
    attest "$V/identical/pub/trace"
    size=$(wc -c < "$good")
    for cut in 0 1 17 100 400 700 $((size / 2)) $((size - 3)); do
        head -c "$cut" "$good" > "$WORK/h/cut.json"
        dv "$WORK/h/cut.json" --rerun-trace "$V/identical/rerun"
        expect_one_error "cut at byte $cut" "is not a usable attestation"
    done
    printf '{"schema": "detshim-attestation/1", "root": 5}' > "$WORK/h/types.json"
    dv "$WORK/h/types.json" --rerun-trace "$V/identical/rerun"
    expect_one_error "a key of the wrong type" "detshim_version|trace_format|root"
    printf '{"schema": "something-else/9"}' > "$WORK/h/schema.json"
    dv "$WORK/h/schema.json" --rerun-trace "$V/identical/rerun"
    expect_one_error "another schema" 'schema "something-else/9" is not detshim-attestation/1'
    "$PY" -c 'print("[" * 5000)' > "$WORK/h/deep.json"
    dv "$WORK/h/deep.json" --rerun-trace "$V/identical/rerun"
    expect_one_error "deep nesting" "nested deeper than 32 levels"
    printf '{"schema": "detshim\\u0000-attestation/1"}' > "$WORK/h/nul.json"
    dv "$WORK/h/nul.json" --rerun-trace "$V/identical/rerun"
    expect_one_error "a NUL in a string" 'u0000 in a string'
    printf '{"schema": "a", "schema": "b"}' > "$WORK/h/dup.json"
    dv "$WORK/h/dup.json" --rerun-trace "$V/identical/rerun"
    expect_one_error "a duplicate key" 'duplicate key "schema"'
    printf '\377\376{}' > "$WORK/h/bin.json"
    dv "$WORK/h/bin.json" --rerun-trace "$V/identical/rerun"
    expect_one_error "binary bytes" "not a usable attestation"
    sed 's/"sha256": "[0-9a-f]*", "process"/"sha256": "not-hex", "process"/' "$good" > "$WORK/h/sha.json"
    dv "$WORK/h/sha.json" --rerun-trace "$V/identical/rerun"
    expect_one_error "a digest that is not hex" "not 64 lowercase hex digits"
}

# Damaged copies of a good attestation (cut, bytes replaced by JSON's own
# punctuation and by non-UTF-8 bytes): never a crash, and a refusal is
# always one line.
test_damaged_attestations_never_crash() {
    attest "$V/identical/pub/trace"
    mkdir -p "$WORK/fz"
    got=$("$PY" - "$DV" "$V/identical/pub/trace/attestation.json" "$V/identical/rerun" "$WORK/fz" <<'EOF'
import random, subprocess, sys
dv, good, rerun, d = sys.argv[1:]
src = open(good, "rb").read()
rng = random.Random(14)
cases = [src[:rng.randrange(len(src) - 1)] for _ in range(40)]
for _ in range(80):
    b = bytearray(src)
    for _ in range(rng.randrange(1, 4)):
        b[rng.randrange(len(b))] = rng.choice(b'{}[]",:\\0u9 \x80\xff')
    cases.append(bytes(b))
bad = 0
for i, c in enumerate(cases):
    path = "%s/a%d.json" % (d, i)
    open(path, "wb").write(c)
    r = subprocess.run([dv, path, "--rerun-trace", rerun], capture_output=True)
    if r.returncode not in (0, 1, 2) or (r.returncode == 2 and r.stderr.count(b"\n") != 1):
        bad += 1
        print("case %d: exit %d: %r" % (i, r.returncode, r.stderr[-200:]), file=sys.stderr)
print(len(cases), bad)
EOF
)
    expect_eq "damaged attestations: cases tried, cases that crashed or said more than one line" \
        "120 0" "$got"
}

test_an_attestation_that_disagrees_with_its_trace_is_not_verified() {
    cp -r "$V/identical" "$WORK/edited"
    attest "$WORK/edited/pub/trace"
    sed 's/"root": "[0-9a-f]*",/"root": "'"$(printf '%064d' 0)"'",/' \
        "$WORK/edited/pub/trace/attestation.json" > "$WORK/edited.json"
    mv "$WORK/edited.json" "$WORK/edited/pub/trace/attestation.json"
    dv "$WORK/edited/pub/trace" --rerun-trace "$WORK/edited/rerun"
    expect_eq "edited root: exit status" 1 "$rc"
    expect_verdict "edited root: named" "^not verified: the published trace .* has root [0-9a-f]{64}, but its attestation says 0{64}"
}

test_a_damaged_published_trace_is_named() {
    cp -r "$V/identical" "$WORK/cut"
    attest "$WORK/cut/pub/trace"
    truncate -s -40 "$WORK/cut/pub/trace/main.dtrace"
    dv "$WORK/cut/pub/trace" --rerun-trace "$WORK/cut/rerun"
    expect_eq "cut trace: exit status" 1 "$rc"
    expect_verdict "cut trace: named" "^not verified: the published run is incomplete"
    expect_grep "cut trace: the file is named" "the published run's trace file is cut short" "$OUT"
    printf 'garbage' > "$WORK/cut/pub/trace/main.dtrace"
    dv "$WORK/cut/pub/trace" --rerun-trace "$WORK/cut/rerun"
    expect_one_error "not a trace" "the published trace .* cannot be read: .*main.dtrace"
}

test_attest_needs_the_files_of_a_custom_policy() {
    dv --attest "$V/custom_policy/pub/trace"
    expect_one_error "custom policy without its files" "pass each of its files with --policy-file"
    dv --attest "$V/custom_policy/pub/trace" --policy-file "$V/custom_policy/lab.policy"
    expect_one_error "custom policy with a file missing" \
        "digest to .* but the trace ran under policy /lab/lab.policy"
}

test_a_custom_policy_is_shown_before_it_runs_and_a_refused_one_runs_nothing() {
    if [ ! -x "$PROGS/blas_prog" ]; then
        skip "custom policy" "build/programs/blas_prog is not built (make integration builds it)"
        return
    fi
    attest "$V/custom_policy/pub/trace" --policy-file "$V/custom_policy/lab.policy" \
        --policy-file "$TOP/policies/default.policy"
    dv "$V/custom_policy/pub/trace" -- "$PROGS/blas_prog"
    head -n 1 "$OUT" > "$WORK/first"
    expect_grep "custom: shown first" "^policy: the published policy /lab/lab.policy is not a shipped one" "$WORK/first"
    expect_grep "custom: the file is shown" "^  lab.policy \(sha256 [0-9a-f]{64}, not shipped\) sets:" "$OUT"
    expect_grep "custom: its settings" "^    \[blas\] threads = 2" "$OUT"
    expect_grep "custom: what it sets in the environment" "^  environment: FOO_BAR=1" "$OUT"
    expect_grep "custom: the loader's warning" "^  warning: FOO_BAR is not a known determinism switch" "$OUT"
    expect_grep "custom: accepted and run" "^re-run: trace in " "$OUT"
    attest "$V/refused_policy/pub/trace" --policy-file "$V/refused_policy/bad.policy"
    dv "$V/refused_policy/pub/trace" -- "$PROGS/blas_prog"
    expect_one_error "refused policy" \
        "the policy loader refuses the published policy, so nothing was run: detshim: .*bad.policy:2"
}

test_usage() {
    dv "$V/identical/pub/trace"
    expect_one_error "no command" "give the command that produced the published run after --"
    dv --frobnicate
    expect_one_error "unknown option" "unknown option '--frobnicate'"
    dv --help
    expect_eq "help: exit status" 0 "$rc"
    expect_grep "help: verify usage" "detverify \[--json\] \[--pubkey PUB.pem\] PUBLISHED -- CMD" "$OUT"
    dv --version
    expect_grep "version" "^detverify [0-9.]+ \(trace format 3, attestation schema detshim-attestation/1\)$" "$OUT"
}

# A real lab: blas_prog under detrun, attested, published as lab/trace,
# verified from another working directory (a note, not a failure).
test_real_run_verifies_from_another_directory() {
    if [ ! -x "$PROGS/blas_prog" ]; then
        skip "real run" "build/programs/blas_prog is not built (make integration builds it)"
        return
    fi
    mkdir -p "$WORK/lab" "$WORK/verifier"
    (cd "$WORK/lab" && "$DETRUN" -p default -t trace -- "$PROGS/blas_prog" >/dev/null 2>&1 &&
        "$DV" --attest trace --cmd "$PROGS/blas_prog" >/dev/null) || fail "real run: the lab's run"
    (cd "$WORK/verifier" && "$DV" "$WORK/lab/trace" -- "$PROGS/blas_prog") >"$OUT" 2>"$ERR"
    rc=$?
    expect_eq "real run: exit status" 0 "$rc"
    expect_verdict "real run: verdict" "^verified: "
    expect_grep "real run: another working directory is a note" "^  note: the working directory differs" "$OUT"
    expect_grep "real run: the re-run's folder is printed" "^re-run: trace in .*/detverify\.[A-Za-z0-9]+/trace" "$OUT"
}

# A run of 10^6 calls (a 240 MB trace): attesting it and verifying it
# against a re-run read the records through cursors, in memory that does
# not grow with the trace. Loading them whole took 2.6 times the trace's
# size (a scikit-learn test run's 15 GB trace: 24 GB, and the kernel
# killed detverify). Address space limited to 256 MB.
test_a_long_run_is_attested_and_verified_in_bounded_memory() {
    if [ -n "${DETSHIM_SANITIZE_BUILD:-}" ]; then
        skip "long run" "ASan reserves terabytes of address space: no ulimit -v under it"
        return
    fi
    mkdir -p "$WORK/long"
    (cd "$WORK/long" && "$DETRUN" -p default -t trace -- "$PROGS/window_prog" 1000000 0 0 \
        >/dev/null 2>&1) || fail "long run: the lab's run"
    (ulimit -v 262144 && cd "$WORK/long" && "$DV" --attest trace) >"$OUT" 2>"$ERR"
    expect_eq "long run: attested in 256 MB of address space (exit status)" 0 $?
    (ulimit -v 262144 && cd "$WORK/long" && "$DV" trace -- "$PROGS/window_prog" 1000000 0 0) \
        >"$OUT" 2>"$ERR"
    expect_eq "long run: verified in 256 MB of address space (exit status)" 0 $?
    expect_verdict "long run: verdict" "^verified: "
    (ulimit -v 262144 && "$DETDIFF" --show "$WORK/long/trace") 2>"$ERR" |
        grep '^    999999 ' >"$OUT"
    expect_grep "long run: --show reaches the last record in 256 MB" "^    999999 cblas_ddot " "$OUT"
    rm -rf "$WORK/long"
}

# lab_run WHAT DIR POLICY PATTERN REASON CMD...: the lab's run of CMD in
# DIR under detrun into DIR/trace, attested. Returns 1, having failed or
# skipped WHAT, when the run fails or its trace holds no record matching
# PATTERN (the writer does not record that yet).
lab_run() {
    what=$1 dir=$2 policy=$3 pattern=$4 reason=$5
    shift 5
    (cd "$dir" && "$DETRUN" -p "$policy" -t trace -- "$@") >/dev/null 2>&1 ||
        { fail "$what: the lab's run"; return 1; }
    if ! "$DETDIFF" --show "$dir/trace" 2>/dev/null | grep -q -- "$pattern"; then
        skip "$what" "$reason"
        return 1
    fi
    (cd "$dir" && "$DV" --attest trace >/dev/null) || { fail "$what: attest"; return 1; }
}

# A small trainer that reads data/train.csv and writes weights.pt; the
# artifact records come from the writer (the policy's [trace] globs).
test_real_trainer_catches_swapped_weights_and_other_data() {
    mkdir -p "$WORK/trainer/data"
    cat > "$WORK/trainer/train.py" <<'EOF'
import hashlib, random
data = open("data/train.csv", "rb").read()
random.seed(0)
w = hashlib.sha256(data + bytes(random.getrandbits(8) for _ in range(32))).digest()
open("weights.pt", "wb").write(w * 64)
EOF
    printf 'x,y\n1,2\n' > "$WORK/trainer/data/train.csv"
    lab_run "trainer: weights and data" "$WORK/trainer" default ' artifact\.write ' \
        "writer has no artifact records yet" "$PY" train.py || return
    mkdir -p "$WORK/verify2/data"
    cp "$WORK/trainer/train.py" "$WORK/verify2/"
    cp "$WORK/trainer/data/train.csv" "$WORK/verify2/data/"
    (cd "$WORK/verify2" && "$DV" "$WORK/trainer/trace" -- "$PY" train.py) >"$OUT" 2>"$ERR"
    rc=$?
    expect_eq "trainer: an honest lab verifies" 0 "$rc"
    printf 'post-trained' >> "$WORK/trainer/weights.pt"
    (cd "$WORK/verify2" && rm -f weights.pt && "$DV" "$WORK/trainer/trace" -- "$PY" train.py) \
        >"$OUT" 2>"$ERR"
    rc=$?
    expect_eq "trainer: swapped weights are not verified" 1 "$rc"
    expect_verdict "trainer: swapped weights, named" "^not verified: the published weights.pt "
    expect_grep "trainer: made outside the run" "produced outside the published run" "$OUT"
    # Verifying inside the published folder itself: the re-run overwrites
    # weights.pt, so the published one must have been hashed before.
    (cd "$WORK/trainer" && "$DV" trace -- "$PY" train.py) >"$OUT" 2>"$ERR"
    expect_verdict "trainer: swapped weights, verified in place" "^not verified: the published weights.pt "
    if ! "$DETDIFF" --show "$WORK/trainer/trace" | grep -q ' artifact\.read .*data/train.csv'; then
        skip "trainer: other data" "the policy's [trace] inputs globs do not cover data/train.csv"
        return
    fi
    printf 'x,y\n1,3\n' > "$WORK/verify2/data/train.csv"
    (cd "$WORK/verify2" && rm -f weights.pt && "$DV" "$WORK/trainer/trace" -- "$PY" train.py) \
        >"$OUT" 2>"$ERR"
    expect_verdict "trainer: other data, named" "^not verified: input data/train.csv differs"
}

# A run resumed twice from its checkpoint: three segments, each verified by
# re-running it in order; and a lab whose second segment started from a
# checkpoint the first did not write.
test_real_segments_verify_in_order_and_a_broken_chain_is_named() {
    mkdir -p "$WORK/seglab/data" "$WORK/segver/data"
    cat > "$WORK/seglab/seg.py" <<'EOF'
import hashlib, os
state = open("ckpt.pt", "rb").read() if os.path.exists("ckpt.pt") else b"start"
data = open("data/train.csv", "rb").read()
open("ckpt.pt", "wb").write(hashlib.sha256(state + data).digest() * 32)
EOF
    printf 'x,y\n1,2\n' > "$WORK/seglab/data/train.csv"
    cp "$WORK/seglab/seg.py" "$WORK/segver/"
    cp "$WORK/seglab/data/train.csv" "$WORK/segver/data/"
    for k in 1 2 3; do
        (cd "$WORK/seglab" && "$DETRUN" -p default -t "t$k" -- "$PY" seg.py) >/dev/null 2>&1 ||
            { fail "segments: the lab's run $k"; return; }
    done
    if ! "$DETDIFF" --show "$WORK/seglab/t2" 2>/dev/null | grep -q ' artifact\.read .*ckpt\.pt'; then
        skip "segments: real re-runs" "writer has no artifact records yet (or none for reading ckpt.pt)"
        return
    fi
    for k in 1 2 3; do
        (cd "$WORK/seglab" && "$DV" --attest "t$k" >/dev/null) || fail "segments: attest $k"
    done
    (cd "$WORK/segver" && "$DV" --segment "$WORK/seglab/t1" --segment "$WORK/seglab/t2" \
        --segment "$WORK/seglab/t3" -- "$PY" seg.py) >"$OUT" 2>"$ERR"
    rc=$?
    expect_eq "segments: three re-run in order" 0 "$rc"
    expect_verdict "segments: verdict" "^verified: all 3 segments"
    printf 'another checkpoint' > "$WORK/seglab/ckpt.pt"
    (cd "$WORK/seglab" && "$DETRUN" -p default -t t2b -- "$PY" seg.py && "$DV" --attest t2b) \
        >/dev/null 2>&1 || fail "segments: the lab's other run"
    dv --chain "$WORK/seglab/t1" "$WORK/seglab/t2b"
    expect_verdict "segments: a broken chain, named" \
        "^not verified: segment 2 started from ckpt.pt sha [0-9a-f]{64}, which segment 1 did not write"
}

# The lab trained with Debian's numpy, the verifier re-runs with the
# venv's: the package is named first, not one of its extension modules.
test_real_other_numpy_is_not_verified_naming_the_package() {
    if [ ! -x "$VENV_PY" ] || ! "$VENV_PY" -c 'import numpy' 2>/dev/null ||
        ! "$PY" -c 'import numpy' 2>/dev/null; then
        skip "other numpy" "needs numpy in both $PY and the venv (make deps)"
        return
    fi
    mkdir -p "$WORK/nplab"
    cat > "$WORK/nplab/np.py" <<'EOF'
import numpy as np
a = np.arange(64, dtype=np.float64).reshape(8, 8) / 7.0
np.save("weights.npy", a @ a)
EOF
    lab_run "other numpy" "$WORK/nplab" numpy ' env\.python package=numpy' \
        "writer has no env.python records yet" "$PY" np.py || return
    mkdir -p "$WORK/npver"
    cp "$WORK/nplab/np.py" "$WORK/npver/"
    (cd "$WORK/npver" && "$DV" "$WORK/nplab/trace" -- "$VENV_PY" np.py) >"$OUT" 2>"$ERR"
    rc=$?
    expect_eq "other numpy: exit status" 1 "$rc"
    expect_verdict "other numpy: the package is named first" \
        '^not verified: Python package numpy differs: published "1\.[0-9.]+", re-run "2\.'
}

test_identical_runs_verify
test_honest_trace_with_other_weights_is_not_verified_naming_the_file
test_a_run_that_wrote_other_weights_is_not_verified
test_other_data_is_not_verified_naming_the_input
test_environment_is_named_before_outputs
test_each_bit_changing_environment_fact_fails
test_facts_that_cannot_change_bits_are_notes
test_another_isa_that_gives_the_same_run_verifies_with_a_note
test_a_trace_divergence_is_named
test_published_files_are_hashed_before_the_rerun_overwrites_them
test_json_verdict_is_one_object
test_attestation_is_stable
test_signatures
test_segments_chain_and_a_broken_chain_is_named
test_hostile_attestations_give_one_line_and_exit_2
test_damaged_attestations_never_crash
test_an_attestation_that_disagrees_with_its_trace_is_not_verified
test_a_damaged_published_trace_is_named
test_attest_needs_the_files_of_a_custom_policy
test_a_custom_policy_is_shown_before_it_runs_and_a_refused_one_runs_nothing
test_usage
test_real_run_verifies_from_another_directory
test_a_long_run_is_attested_and_verified_in_bounded_memory
test_real_trainer_catches_swapped_weights_and_other_data
test_real_segments_verify_in_order_and_a_broken_chain_is_named
test_real_other_numpy_is_not_verified_naming_the_package
finish
