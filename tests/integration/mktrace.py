#!/usr/bin/env python3
"""An independent writer of detshim trace files, written from the format
specification in include/detshim/trace_format.h and sharing no code with the
shim, so a test that passes here shows that the reader and detdiff follow
the spec rather than the writer's habits. It crafts run directories for
tests/integration/test-detdiff.sh: identical runs, each kind of divergence,
cut-short files and hostile ones.

    mktrace.py --verify OUTDIR  writes OUTDIR/verify/<case>/{pub,rerun}/ for
                           test-verify.sh (artifact and env records)
    mktrace.py OUTDIR [N]  writes OUTDIR/<case>/{a,b}/... and, per case,
                           OUTDIR/<case>/root_{a,b} (run roots computed here);
                           OUTDIR/bad/ (files detdiff must refuse or flag)
                           and OUTDIR/fuzz/ (N damaged copies of each kind)

Frame hashes and checks, record hashes, module ids and operand digests use
XXH3 from libxxhash
(Debian: libxxhash0) through ctypes; chains and roots use hashlib.
"""
import ctypes
import hashlib
import os
import random
import struct
import sys

# ---- the format, from trace_format.h -------------------------------------

MAGIC = b"DETSHIMT"
VERSION = 3

F_DIGEST_ALGS, F_PROGRAM, F_PROCESS, F_POLICY_NAME, F_POLICY_DIGEST = 1, 2, 3, 4, 5
F_SHIM_VERSION, F_ARGS, F_PID, F_HOST, F_START_TIME = 6, 7, 8, 9, 10
F_WINDOW, F_LEVEL = 20, 21
FIELD_INFO = 0x1

RECORD, SITE, THREAD_END, PROCESS_END = 1, 2, 3, 4
WINDOW = 7
THREAD_IDENTITY = 0x40000000  # frame thread bit of an identity stream
INT, CHAR, F32, F64, C64, C128, STR = 1, 2, 3, 4, 5, 6, 7
IN, OUT = 1, 2

WINDOW_SEED = b"detshim.window.v3"
STREAM_SEED = b"detshim.stream.v2"
PROCESS_SEED = b"detshim.process.v1"
RUN_SEED = b"detshim.run.v1"


class _XXH128(ctypes.Structure):
    _fields_ = [("low64", ctypes.c_uint64), ("high64", ctypes.c_uint64)]


def _load_xxhash():
    for name in ("libxxhash.so.0", "libxxhash.so"):
        try:
            lib = ctypes.CDLL(name)
        except OSError:
            continue
        lib.XXH3_64bits_withSeed.restype = ctypes.c_uint64
        lib.XXH3_64bits_withSeed.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_uint64]
        lib.XXH3_128bits.restype = _XXH128
        lib.XXH3_128bits.argtypes = [ctypes.c_char_p, ctypes.c_size_t]
        return lib
    sys.exit("mktrace.py: cannot load libxxhash.so.0; install libxxhash0 (apt-get install libxxhash0)")


_xxh = _load_xxhash()


def xxh3_64(data, seed=0):
    return _xxh.XXH3_64bits_withSeed(data, len(data), seed)


def xxh3_128(data):
    """(low64, high64) of XXH3-128, the operand digest of the spec."""
    d = _xxh.XXH3_128bits(data, len(data))
    return d.low64, d.high64


def frame_hash(payload):
    """The frame hash: XXH3-128 as 16 bytes (low64, high64 little-endian);
    a RECORD frame's is its record hash."""
    lo, hi = xxh3_128(payload)
    return struct.pack("<QQ", lo, hi)


def record_hash(thread, payload):
    """A record's hash: its frame hash, or SHA-256 in an identity stream."""
    if thread & THREAD_IDENTITY:
        return hashlib.sha256(payload).digest()
    return frame_hash(payload)


def frame_check(ftype, thread, payload):
    return xxh3_64(frame_hash(payload), (ftype << 32) | thread) & 0xFFFFFFFF


def u8(v):
    return struct.pack("<B", v)


def u16(v):
    return struct.pack("<H", v)


def u32(v):
    return struct.pack("<I", v)


def u64(v):
    return struct.pack("<Q", v & 0xFFFFFFFFFFFFFFFF)


def sstr(s):
    b = s.encode() if isinstance(s, str) else s
    assert len(b) < 256
    return u8(len(b)) + b


def frame(ftype, thread, payload, check=None, length=None):
    """One frame; `check` and `length` may be forced to craft damage."""
    if check is None:
        check = frame_check(ftype, thread, payload)
    if length is None:
        length = len(payload)
    return u32(length) + u16(ftype) + u16(0) + u32(thread) + u32(check) + payload


def module_id(name):
    return xxh3_64(name.encode())


def operand_digest(tag):
    """A stand-in operand digest: XXH3-128 of a tag naming the data."""
    return xxh3_128(tag.encode())


def encode_param(name, ptype, value):
    out = sstr(name) + u8(ptype)
    if ptype == INT:
        return out + struct.pack("<q", value)
    if ptype == CHAR:
        return out + u8(ord(value))
    if ptype == F32:
        return out + struct.pack("<f", value)
    if ptype == F64:
        return out + struct.pack("<d", value)
    if ptype == C64:
        return out + struct.pack("<ff", *value)
    if ptype == C128:
        return out + struct.pack("<dd", *value)
    if ptype == STR:
        return out + sstr(value)
    raise ValueError(ptype)


class Record:
    """One intercepted call. operands: (name, role, elem_size, count, tag);
    frames: (module name, offset); notes: (key, value)."""

    def __init__(self, api, params=(), operands=(), frames=(), notes=()):
        self.api, self.params, self.operands = api, list(params), list(operands)
        self.frames, self.notes = list(frames), list(notes)

    def payload(self, seq):
        out = u64(seq) + sstr(self.api) + u8(len(self.params))
        for name, ptype, value in self.params:
            out += encode_param(name, ptype, value)
        out += u8(len(self.operands))
        for name, role, elem, count, tag in self.operands:
            lo, hi = operand_digest(tag)
            out += sstr(name) + u8(role) + u8(elem) + u64(count) + u64(lo) + u64(hi)
        out += u8(len(self.frames))
        for module, offset in self.frames:
            out += u64(module_id(module)) + u64(offset)
        out += u8(len(self.notes))
        for key, value in self.notes:
            out += sstr(key) + sstr(value)
        return out


class Trace:
    """One process's trace: header fields and per-thread record lists."""

    def __init__(self, process, program="train", policy="default", pid=100, extra_fields=(),
                 window=4096, summary=False):
        self.process = process
        self.window = window
        self.summary = summary  # WINDOW frames in place of every window's records
        self.fields = [
            (F_DIGEST_ALGS, 0, b"operands=xxh3-128;records=xxh3-128;chain=sha256"),
            (F_PROGRAM, 0, program.encode()),
            (F_PROCESS, 0, process.encode()),
            (F_POLICY_NAME, 0, policy.encode()),
            (F_POLICY_DIGEST, 0, hashlib.sha256(policy.encode()).hexdigest().encode()),
            (F_SHIM_VERSION, 0, b"0.1.0"),
            (F_ARGS, FIELD_INFO, b"python train.py --seed 1"),
            (F_PID, FIELD_INFO, str(pid).encode()),
            (F_HOST, FIELD_INFO, b"host-%d" % pid),
            (F_START_TIME, FIELD_INFO, str(1700000000 + pid).encode()),
            (F_WINDOW, 0, str(window).encode()),
            (F_LEVEL, FIELD_INFO, b"summary" if summary else b"full"),
        ] + list(extra_fields)
        self.threads = {}  # writer index -> [Record]

    def set_field(self, key, value):
        self.fields = [(k, f, value if k == key else v) for k, f, v in self.fields]

    def add(self, thread, rec):
        self.threads.setdefault(thread, []).append(rec)
        return rec

    def header(self, version=VERSION):
        block = b"".join(u16(k) + u16(f) + u32(len(v)) + v for k, f, v in self.fields)
        return MAGIC + u32(version) + u32(len(block)) + block

    def windows(self, thread):
        """(first record, count, digest) of each window of a stream."""
        recs, out = self.threads[thread], []
        for first in range(0, len(recs), self.window):
            m = hashlib.sha256(WINDOW_SEED)
            part = recs[first:first + self.window]
            for i, rec in enumerate(part):
                m.update(record_hash(thread, rec.payload(first + i)))
            out.append((first, len(part), m.digest()))
        return out

    def chain(self, thread):
        h = hashlib.sha256(STREAM_SEED).digest()
        for _, _, d in self.windows(thread):
            h = hashlib.sha256(h + d).digest()
        return h

    def root(self):
        m = hashlib.sha256(PROCESS_SEED)
        for k, f, v in self.fields:
            if not f & FIELD_INFO:
                m.update(u16(k) + u32(len(v)) + v)
        heads = sorted((self.chain(t), len(r)) for t, r in self.threads.items())
        for head, count in heads:
            m.update(u64(count) + head)
        return m.digest()

    def frames(self, order=None):
        """All frames of the file. `order` lists thread indices in the
        order their records interleave (default: round robin by index);
        SITE frames precede a site's first use in each thread."""
        queues = {t: list(enumerate(r)) for t, r in self.threads.items()}
        if order is None:
            order = []
            for i in range(max((len(r) for r in self.threads.values()), default=0)):
                order += [t for t in sorted(self.threads) if i < len(self.threads[t])]
        out, seen = [], set()
        if self.summary:  # every window as its digest; no records, no sites
            order = []
            for t in sorted(self.threads):
                for first, count, d in self.windows(t):
                    out.append(frame(WINDOW, t, u64(first) + u32(count) + d))
        for t in order:
            seq, rec = queues[t].pop(0)
            for fr in rec.frames:
                if (t, fr) not in seen:
                    seen.add((t, fr))
                    payload = u64(module_id(fr[0])) + u64(fr[1]) + sstr(fr[0]) + sstr(symbol(fr))
                    out.append(frame(SITE, t, payload))
            out.append(frame(RECORD, t, rec.payload(seq)))
        for t in sorted(self.threads):
            out.append(frame(THREAD_END, t, u64(len(self.threads[t])) + self.chain(t)))
        out.append(frame(PROCESS_END, 0, u32(len(self.threads)) + self.root()))
        return out

    def to_bytes(self, order=None, version=VERSION):
        return self.header(version) + b"".join(self.frames(order))


def run_root(traces):
    m = hashlib.sha256(RUN_SEED)
    for t in sorted(traces, key=lambda t: t.process.encode()):
        m.update(t.process.encode() + b"\0" + t.root())
    return m.digest()


# ---- a small program's calls ----------------------------------------------

SYMBOLS = {
    ("libtrain.so", 0x1a40): "train_step",
    ("libtrain.so", 0x1b80): "forward",
    ("train", 0x2210): "main",
}


def symbol(frame):
    return SYMBOLS.get(frame, "fn_%x" % frame[1])


def gemm(tag, m=4, n=4, k=4, out_tag=None, notes=(("blas.mode", "passthrough"),), site=0x1b80):
    """A dgemm_ call whose inputs are named by `tag`."""
    return Record(
        "dgemm_",
        [("transa", CHAR, "N"), ("transb", CHAR, "N"), ("m", INT, m), ("n", INT, n),
         ("k", INT, k), ("alpha", F64, 1.0), ("lda", INT, m), ("ldb", INT, k),
         ("beta", F64, 0.0), ("ldc", INT, m)],
        [("a", IN, 8, m * k, tag + ".a"), ("b", IN, 8, k * n, tag + ".b"),
         ("c", OUT, 8, m * n, out_tag or (tag + ".c"))],
        [("libtrain.so", site), ("libtrain.so", 0x1a40), ("train", 0x2210)],
        notes)


def ddot(tag, n=16, out_tag=None):
    return Record(
        "ddot_", [("n", INT, n), ("incx", INT, 1), ("incy", INT, 1)],
        [("x", IN, 8, n, tag + ".x"), ("y", IN, 8, n, tag + ".y"),
         ("result", OUT, 8, 1, out_tag or (tag + ".r"))],
        [("libtrain.so", 0x1a40), ("train", 0x2210)],
        [("blas.mode", "passthrough")])


def saxpy(tag):
    return Record(
        "saxpy_", [("n", INT, 8), ("alpha", F32, 0.5), ("incx", INT, 1), ("incy", INT, 1)],
        [("x", IN, 4, 8, tag + ".x"), ("y", IN, 4, 8, tag + ".y"),
         ("y", OUT, 4, 8, tag + ".y2")],
        [("libtrain.so", 0x1a40)], [])


def step(n, tags, params=None):
    """A framework.step record (docs/frameworks.md): tags names each
    parameter's digest; params replaces the usual ones."""
    return Record(
        "framework.step",
        params if params is not None else [("framework", STR, "torch"), ("step", INT, n)],
        [(name, OUT, 4, 16, tag) for name, tag in tags],
        [("libffi.so.8", 0x6f7a)])


def stepped_run(variant=None):
    """A main thread whose dgemm_ calls are each followed by a step record
    of layer1.weight and layer3.weight."""
    main = Trace("main")
    for i in range(1, 4):
        main.add(0, gemm("g%d" % i))
        main.add(0, step(i, [("layer1.weight", "l1.%d" % i), ("layer3.weight", "l3.%d" % i)]))
    traces = [main]
    if variant:
        variant(traces)
    return traces


def training_run(pid=100, variant=None, main_calls=6, window=4096, summary=False):
    """A run of two processes: `main` with a main thread and two workers,
    and a forked child `main.f1`. `variant(traces)` may alter it. window,
    summary: the windows, and whether only their digests are written."""
    main = Trace("main", pid=pid, window=window, summary=summary)
    for i in range(main_calls):
        main.add(0, gemm("step%d" % i))
    for i in range(3):
        main.add(1, ddot("w1.%d" % i))
        main.add(2, saxpy("w2.%d" % i))
    child = Trace("main.f1", pid=pid + 1, window=window, summary=summary)
    for i in range(2):
        child.add(0, ddot("child%d" % i))
    traces = [main, child]
    if variant:
        variant(traces)
    return traces


def write_run(directory, traces, orders=None, mangle=None):
    """Writes one file per process; `mangle(name, bytes)` may damage one."""
    os.makedirs(directory, exist_ok=True)
    for t in traces:
        data = t.to_bytes((orders or {}).get(t.process))
        if mangle:
            data = mangle(t.process, data)
        with open(os.path.join(directory, t.process + ".dtrace"), "wb") as f:
            f.write(data)


def write_bytes(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)


# ---- the cases -------------------------------------------------------------


def case(out, name, a_traces, b_traces, b_orders=None, b_mangle=None):
    d = os.path.join(out, name)
    write_run(os.path.join(d, "a"), a_traces)
    write_run(os.path.join(d, "b"), b_traces, b_orders, b_mangle)
    with open(os.path.join(d, "root_a"), "w") as f:
        f.write(run_root(a_traces).hex() + "\n")
    with open(os.path.join(d, "root_b"), "w") as f:
        f.write(run_root(b_traces).hex() + "\n")


def replace(main_idx, thread, seq, rec):
    def v(traces):
        traces[main_idx].threads[thread][seq] = rec
    return v


def frame_offsets(data):
    """Offsets of the frames of a well-formed file."""
    off = 16 + struct.unpack_from("<I", data, 12)[0]
    out = []
    while off < len(data):
        out.append(off)
        off += 16 + struct.unpack_from("<I", data, off)[0]
    return out


def cut_mid_frame(k):
    """Keeps frames before the k-th record frame and half of it."""
    def mangle(name, data):
        if name != "main":
            return data
        recs = [o for o in frame_offsets(data) if struct.unpack_from("<H", data, o + 4)[0] == RECORD]
        o = recs[k]
        return data[: o + 20]
    return mangle


def drop_closing(name, data):
    if name != "main":
        return data
    last = frame_offsets(data)[-1]
    return data[:last]


def insert_after_records(k, blob):
    """Inserts raw bytes after the k-th record frame of `main`."""
    def mangle(name, data):
        if name != "main":
            return data
        recs = [o for o in frame_offsets(data) if struct.unpack_from("<H", data, o + 4)[0] == RECORD]
        o = recs[k]
        end = o + 16 + struct.unpack_from("<I", data, o)[0]
        return data[:end] + blob + data[end:]
    return mangle


def make_all(out):
    base = training_run

    # Identical: same calls; pids, hosts and times differ, threads interleave
    # differently, and the workers start in the other order (indices 1, 2
    # swapped).
    def swap_workers(traces):
        m = traces[0]
        m.threads[1], m.threads[2] = m.threads[2], m.threads[1]
    case(out, "identical", base(), base(pid=500, variant=swap_workers),
         b_orders={"main": [2, 2, 2, 1, 0, 1, 0, 0, 0, 1, 0, 0]})

    # Summary traces (windows of 2 records): a summary and a full trace of
    # the same run are identical; two summaries that differ at record 3
    # name window 1 (records 2..3); a full and a summary trace too; a
    # summary whose stream is longer names the window only it has.
    def summary(**kw):
        return base(window=2, summary=True, **kw)
    case(out, "summary_same", base(window=2), summary())
    case(out, "summary_window", summary(), summary(variant=replace(0, 0, 3, gemm("changed"))))
    case(out, "summary_full", base(window=2), summary(variant=replace(0, 0, 3, gemm("changed"))))
    case(out, "summary_longer", summary(), summary(main_calls=7))

    # A nondeterministic operation: record 2 of main's thread 0, same inputs,
    # different output.
    case(out, "nondet", base(), base(variant=replace(0, 0, 2, gemm("step2", out_tag="other.c"))))

    # Inputs differ at record 3 (divergence entered between calls 2 and 3),
    # and at record 0 (nothing matched before).
    case(out, "inputs", base(), base(variant=replace(0, 0, 3, gemm("changed"))))
    case(out, "inputs_first", base(), base(variant=replace(0, 0, 0, gemm("changed"))))

    # Control flow: a different shape, a different API.
    case(out, "control_params", base(), base(variant=replace(0, 0, 1, gemm("step1", m=8))))
    case(out, "control_api", base(), base(variant=replace(0, 0, 1, ddot("step1"))))

    # A decision (note) differs, outputs too.
    case(out, "decision", base(),
         base(variant=replace(0, 0, 4, gemm("step4", out_tag="x.c",
                                            notes=(("blas.mode", "canonical"),)))))

    # Same call reached from another call site.
    case(out, "site", base(), base(variant=replace(0, 0, 2, gemm("step2", site=0x1c00))))

    # Extra calls: B's main thread makes two more calls.
    def extra(traces):
        traces[0].add(0, gemm("step6"))
        traces[0].add(0, gemm("step7"))
    case(out, "extra", base(), base(variant=extra))

    # Step records: B's dgemm_ before step 2 already has other inputs, and
    # step 2 has another layer3.weight: detdiff names step 2 first. A step
    # without a step number, and a run with one step more.
    def step2(traces):
        t = traces[0].threads[0]
        t[2] = gemm("changed")
        t[3] = step(2, [("layer1.weight", "l1.2"), ("layer3.weight", "other")])
    case(out, "steps", stepped_run(), stepped_run(variant=step2))
    def nameless(tag):
        def v(traces):
            traces[0].threads[0][1] = step(0, [("w", tag)], params=[("framework", STR, "jax")])
        return v
    case(out, "steps_nameless", stepped_run(variant=nameless("x")),
         stepped_run(variant=nameless("y")))
    def one_more(traces):
        traces[0].add(0, step(4, [("layer1.weight", "l1.4")]))
    case(out, "steps_extra", stepped_run(), stepped_run(variant=one_more))

    # Truncated: B's main file cut in the middle of its 4th record frame.
    case(out, "truncated", base(), base(), b_mangle=cut_mid_frame(4))
    # Truncated but otherwise equal: only the closing frame is missing.
    case(out, "truncated_end", base(), base(), b_mangle=drop_closing)

    # A worker thread that diverges: pairing must follow content, so B's
    # index 1 (the saxpy worker after the swap) pairs with A's index 2.
    def swap_and_diverge(traces):
        swap_workers(traces)
        traces[0].threads[1][1] = saxpy("different")
    case(out, "worker", base(), base(variant=swap_and_diverge))

    # A process present in one run only; a header field that differs.
    case(out, "missing_process", base(), base(variant=lambda t: t.pop(1)))
    # B started six more children (main.f21 ... main.f26); in the other
    # pair each run started a child the other did not.
    def children(names):
        def add(traces):
            for n in names:
                t = Trace(n, pid=200)
                t.add(0, ddot(n))
                traces.append(t)
        return add
    case(out, "more_processes", base(),
         base(variant=children(["main.f%d" % i for i in range(21, 27)])))
    case(out, "other_processes", base(variant=children(["main.f3"])),
         base(variant=children(["main.f4", "main.f5"])))
    case(out, "policy", base(), base(variant=lambda t: [x.set_field(F_POLICY_DIGEST, b"0" * 64) for x in t]))

    # --all: records 1 and 3 differ.
    def two(traces):
        traces[0].threads[0][1] = gemm("step1", out_tag="z1")
        traces[0].threads[0][3] = gemm("step3", out_tag="z3")
    case(out, "two", base(), base(variant=two))

    # Hostile frames after record 2 of main: B is read up to there.
    huge = u32(0xFFFFFFFF) + u16(RECORD) + u16(0) + u32(0) + u32(0)
    case(out, "hostile_huge", base(), base(), b_mangle=insert_after_records(2, huge + b"x" * 64))
    bad_counts = Record("dgemm_", [("m", INT, 1)]).payload(3)
    bad_counts = bad_counts[:-3] + u8(200) + bad_counts[-2:]  # 200 operands, none there
    case(out, "hostile_counts", base(), base(),
         b_mangle=insert_after_records(2, frame(RECORD, 0, bad_counts)))
    overrun = u64(3) + u8(250) + b"dgemm_"  # api claims 250 bytes
    case(out, "hostile_overrun", base(), base(),
         b_mangle=insert_after_records(2, frame(RECORD, 0, overrun)))
    garbage = bytes((i * 97 + 13) & 0xFF for i in range(4096))
    case(out, "hostile_garbage", base(), base(), b_mangle=insert_after_records(2, garbage))
    # A WINDOW frame that does not fit its stream (it claims records 99..),
    # in the middle of a full window: read up to it, marked.
    bad_window = frame(WINDOW, 0, u64(99) + u32(1) + b"\x00" * 32)
    case(out, "hostile_window", base(), base(), b_mangle=insert_after_records(2, bad_window))
    # Unknown frame types carry no records and are skipped.
    case(out, "unknown_frame", base(), base(),
         b_mangle=insert_after_records(2, frame(77, 0, b"future frame")))
    # A closing thread frame that disagrees with the records before it.
    def bad_thread_end(name, data):
        if name != "main":
            return data
        for o in frame_offsets(data):
            if struct.unpack_from("<H", data, o + 4)[0] == THREAD_END:
                payload = u64(99) + b"\x11" * 32
                t = struct.unpack_from("<I", data, o + 8)[0]
                return data[:o] + frame(THREAD_END, t, payload) + data[o + 16 + 40:]
        return data
    case(out, "bad_thread_end", base(), base(), b_mangle=bad_thread_end)

    # Strings meant to hurt a terminal or a JSON parser.
    def nasty(traces):
        traces[0].threads[0][1] = Record(
            "dgemm_\x1b[31m\"\\", [("m\n", STR, "\xff\xfe".encode("latin-1")), ("q", F64, float("nan")),
                                   ("z", C128, (float("inf"), -0.0))],
            [("c\x00", OUT, 8, 1, "n")], [("lib\x07.so", 1)], [("k\t", "v\x7f")])
    case(out, "nasty", base(), base(variant=nasty))

    # Damaged single files, each on its own.
    d = os.path.join(out, "bad")
    good = base()[0]
    write_bytes(os.path.join(d, "notrace.dtrace"), b"#!/bin/sh\necho this is not a trace\n")
    write_bytes(os.path.join(d, "empty.dtrace"), b"")
    for v in (1, 2, VERSION + 1):
        write_bytes(os.path.join(d, "version%d.dtrace" % v), good.to_bytes(version=v))
    write_bytes(os.path.join(d, "magic_only.dtrace"), MAGIC + u32(VERSION))
    write_bytes(os.path.join(d, "header_huge.dtrace"), MAGIC + u32(VERSION) + u32(0xFFFFFFF0) + b"abc")
    write_bytes(os.path.join(d, "header_only.dtrace"), good.header())
    hdr = MAGIC + u32(VERSION) + u32(8) + u16(2) + u16(0) + u32(1000)  # field overruns block
    write_bytes(os.path.join(d, "header_field_overrun.dtrace"), hdr)
    write_bytes(os.path.join(d, "good.dtrace"), good.to_bytes())
    # A run directory holding one good trace and one that is not a trace,
    # named so that either listing order is tried.
    for sub, bad in (("mixed1", "zz.dtrace"), ("mixed2", "aa.dtrace")):
        write_bytes(os.path.join(d, sub, "main.dtrace"), good.to_bytes())
        write_bytes(os.path.join(d, sub, bad), b"not a trace at all, just text\n")
    os.makedirs(os.path.join(d, "emptydir"), exist_ok=True)
    with open(os.path.join(d, "good.root"), "w") as f:
        f.write(run_root([good]).hex() + "\n")


def reseal(data):
    """Recomputes every frame check, so damage inside payloads gets past
    the framing and reaches the record parser."""
    out = bytearray(data)
    off = 16 + struct.unpack_from("<I", data, 12)[0]
    while off + 16 <= len(out):
        length, ftype, _, thread = struct.unpack_from("<IHHI", out, off)
        if length > len(out) - off - 16:
            break
        payload = bytes(out[off + 16: off + 16 + length])
        struct.pack_into("<I", out, off + 12, frame_check(ftype, thread, payload))
        off += 16 + length
    return bytes(out)


def make_fuzz(out, count):
    """`count` damaged copies of a good trace each of three kinds: cut at
    some byte, bytes flipped, bytes flipped and frames resealed."""
    good = training_run()[0].to_bytes()
    rng = random.Random(20240601)
    d = os.path.join(out, "fuzz")
    write_bytes(os.path.join(d, "good.dtrace"), good)
    for i in range(count):
        write_bytes(os.path.join(d, "cut%03d.dtrace" % i), good[: rng.randrange(len(good))])
        for kind in ("flip", "sealed"):
            data = bytearray(good)
            for _ in range(rng.randrange(1, 6)):
                data[rng.randrange(16, len(data))] ^= 1 << rng.randrange(8)
            data = bytes(data)
            write_bytes(os.path.join(d, "%s%03d.dtrace" % (kind, i)),
                        reseal(data) if kind == "sealed" else data)



# ---- detverify: published runs and their re-runs ---------------------------
# Traces as the writer records artifacts (artifact.write / artifact.read:
# path, size, sha256), the environment at exit (env.object: name, id;
# env.python: package, version) and the CPU (header field 17), for
# tests/integration/test-verify.sh: OUTDIR/verify/<case>/{pub,rerun}.

F_SETTINGS, F_SETTINGS_ORIGIN, F_SEED, F_ENTROPY_RULE, F_CPU = 11, 12, 13, 16, 17
POLICY_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "policies")


def policy_digest(texts):
    """The loader's digest: SHA-256 over each file as u64 length, bytes."""
    m = hashlib.sha256()
    for t in texts:
        m.update(u64(len(t)) + t)
    return m.hexdigest()


def shipped_policy(name):
    with open(os.path.join(POLICY_DIR, name + ".policy"), "rb") as f:
        return f.read()


def artifact(api, path, data):
    return Record(api, [("path", STR, path), ("size", INT, len(data)),
                        ("sha256", STR, hashlib.sha256(data).hexdigest())])


def env_object(name, build_id):
    return Record("env.object", [("name", STR, name), ("id", STR, "build-id:" + build_id)])


def env_python(package, version):
    return Record("env.python", [("package", STR, package), ("version", STR, version)])


SETTINGS = b"PYTHONHASHSEED=0\nOMP_NUM_THREADS=1\nOPENBLAS_NUM_THREADS=1\n"
ORIGINS = b"PYTHONHASHSEED: the policy\nOMP_NUM_THREADS: the policy\nOPENBLAS_NUM_THREADS: the policy\n"
CPU = b"model=Test CPU 3000;isa=sse4_2,avx,avx2,fma;cores=2"


def verify_run(pid=100, policy="default", digest=None, data=b"x,y\n1,2\n", weights=b"W1",
               ckpt_in=None, ckpt_out=None, settings=SETTINGS, cpu=CPU, openblas="aa11",
               numpy="1.24.2", entropy_rule=None, nondet=False):
    """One training process: reads data/train.csv (and ckpt_in as ckpt.pt),
    computes, writes weights.pt (and ckpt_out as ckpt.pt), records its
    environment at exit. The first gemm's inputs follow the data, so other
    data shows in the trace as well as in the inputs."""
    extra = [(F_SETTINGS, 0, settings), (F_SETTINGS_ORIGIN, FIELD_INFO, ORIGINS),
             (F_SEED, 0, b"0"), (F_CPU, FIELD_INFO, cpu)]
    if entropy_rule:
        extra.append((F_ENTROPY_RULE, 0, entropy_rule))
    t = Trace("main", policy=policy, pid=pid, extra_fields=extra)
    t.set_field(F_POLICY_DIGEST,
                (digest or policy_digest([shipped_policy("default")])).encode())
    t.add(0, artifact("artifact.read", "data/train.csv", data))
    if ckpt_in is not None:
        t.add(0, artifact("artifact.read", "ckpt.pt", ckpt_in))
    t.add(0, gemm("data-%s" % hashlib.sha256(data).hexdigest()[:8]))
    t.add(0, gemm("step1", out_tag="other" if nondet else None))
    t.add(0, artifact("artifact.write", "weights.pt", weights))
    if ckpt_out is not None:
        t.add(0, artifact("artifact.write", "ckpt.pt", ckpt_out))
    t.add(0, env_object("libopenblas.so.0", openblas))
    t.add(0, env_object("libc.so.6", "cc22"))
    t.add(0, env_python("numpy", numpy))
    t.add(0, env_python("python", "3.11.2"))
    return [t]


def verify_case(out, name, pub, rerun, files=()):
    """OUTDIR/verify/NAME/pub/trace, .../rerun, and published files
    (path, bytes) beside pub/trace."""
    d = os.path.join(out, "verify", name)
    write_run(os.path.join(d, "pub", "trace"), pub)
    write_run(os.path.join(d, "rerun"), rerun)
    for path, data in files:
        write_bytes(os.path.join(d, "pub", path), data)


def make_verify(out):
    vc = verify_case
    vc(out, "identical", verify_run(), verify_run(pid=500), files=[("weights.pt", b"W1")])
    # The lab's trace is honest, the weights it ships are not.
    vc(out, "weights_swapped", verify_run(), verify_run(pid=500),
       files=[("weights.pt", b"W1 post-trained")])
    # The lab's run itself wrote other weights than the workflow gives.
    vc(out, "output_differs", verify_run(weights=b"W2"), verify_run(pid=500))
    vc(out, "input_differs", verify_run(), verify_run(pid=500, data=b"x,y\n1,3\n"))
    # Another OpenBLAS build and, because of it, other weights: the
    # environment is named first.
    vc(out, "object_differs", verify_run(), verify_run(pid=500, openblas="bb22", weights=b"W3"))
    vc(out, "python_differs", verify_run(), verify_run(pid=500, numpy="2.4.0"))
    vc(out, "setting_differs", verify_run(),
       verify_run(pid=500, settings=SETTINGS.replace(b"OMP_NUM_THREADS=1", b"OMP_NUM_THREADS=2")))
    vc(out, "entropy_differs", verify_run(),
       verify_run(pid=500, entropy_rule=b"a never-pin program"))
    vc(out, "isa_differs", verify_run(), verify_run(pid=500, cpu=CPU.replace(b",avx2,fma", b"")),
       files=[("weights.pt", b"W1")])
    # Another instruction set and another trace: the ISA is named first.
    vc(out, "isa_and_trace_differ", verify_run(),
       verify_run(pid=500, cpu=CPU.replace(b",avx2,fma", b""), nondet=True))
    # Facts that cannot change bits: another CPU model, core count, host.
    vc(out, "notes_only", verify_run(),
       verify_run(pid=500, cpu=b"model=Other CPU 2000;isa=fma,avx2,avx,sse4_2;cores=64"))
    vc(out, "trace_differs", verify_run(), verify_run(pid=500, nondet=True))
    # A custom policy, on top of the shipped default.
    lab = b"include = default\n[blas]\nthreads = 2\n[env]\nunsafe = yes\nFOO_BAR = 1\n"
    dig = policy_digest([lab, shipped_policy("default")])
    vc(out, "custom_policy", verify_run(policy="/lab/lab.policy", digest=dig),
       verify_run(pid=500, policy="/lab/lab.policy", digest=dig))
    write_bytes(os.path.join(out, "verify", "custom_policy", "lab.policy"), lab)
    bad = b"[env]\nFOO_BAR = 1\n"
    vc(out, "refused_policy", verify_run(policy="/lab/bad.policy", digest=policy_digest([bad])),
       verify_run(pid=500))
    write_bytes(os.path.join(out, "verify", "refused_policy", "bad.policy"), bad)
    # Three segments of a resumed run, and a chain broken at segment 2.
    d = os.path.join(out, "verify", "segments")
    write_run(os.path.join(d, "s1"), verify_run(ckpt_out=b"C1"))
    write_run(os.path.join(d, "s2"), verify_run(ckpt_in=b"C1", ckpt_out=b"C2"))
    write_run(os.path.join(d, "s3"), verify_run(ckpt_in=b"C2", ckpt_out=b"C3"))
    write_run(os.path.join(d, "s2_other"), verify_run(ckpt_in=b"CX", ckpt_out=b"C2"))
    write_run(os.path.join(d, "s2_fresh"), verify_run(ckpt_out=b"C2"))

if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--verify":
        make_verify(sys.argv[2])
        sys.exit(0)
    if len(sys.argv) not in (2, 3):
        sys.exit("usage: mktrace.py OUTDIR [FUZZ_COUNT]")
    make_all(sys.argv[1])
    make_fuzz(sys.argv[1], int(sys.argv[2]) if len(sys.argv) == 3 else 40)
