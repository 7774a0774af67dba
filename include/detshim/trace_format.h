/* The on-disk trace format, shared by the writer (libdetshim) and the reader
 * (detdiff), so the two can never disagree. Everything is little-endian.
 *
 * A trace file is one process's trace:
 *
 *   file header   "DETSHIMT" magic (8 bytes), u32 format version,
 *                 u32 length of the field block that follows, then fields:
 *                 { u16 key, u16 flags, u32 len, len bytes }.  A field with
 *                 TRACE_FIELD_INFO set is informational (pid, host, time) and
 *                 is never compared nor hashed into the roots.
 *   frames        { u32 payload length, u16 type, u16 reserved (0),
 *                   u32 thread, u32 check } then the payload. thread is
 *                 the writer's thread index (0: the main thread), with
 *                 bit 31 (TRACE_THREAD_ENTROPY) set for that thread's
 *                 entropy stream: entropy reads are chained apart from the
 *                 calls, as they may come at timing-dependent moments;
 *                 bit 30 (TRACE_THREAD_IDENTITY) for its identity stream:
 *                 the files it read and wrote (artifact.read,
 *                 artifact.write) and the code it ran with (env.object,
 *                 env.python), apart because they are not calls;
 *                 bit 29 (TRACE_THREAD_REAL) for its real-entropy stream:
 *                 reads that got real entropy by design (secrets, never-pin
 *                 programs: docs/security.md), recorded with their source,
 *                 size and call site only. That stream is in no root and
 *                 never compared: real entropy may be read any number of
 *                 times without changing what a run commits to.
 *                 frame hash H = XXH3_128bits(payload, length) as 16
 *                 bytes (low64, high64); check = low 32 bits of
 *                 XXH3_64bits_withSeed(H, 16, ((u64)type << 32) | thread).
 *                 A RECORD frame's H is its record hash (below), so the
 *                 payload is hashed once for both.  A reader stops at the
 *                 first frame that is incomplete or fails its check: that is
 *                 where a crash or a kill cut the file.
 *
 * Frame payloads:
 *   RECORD        u64 seq (per thread, from 0); str api (a routine's name;
 *                 framework.step and framework.op for what the Python
 *                 start-up hook describes: a training step's tensors by
 *                 name, a framework op; docs/frameworks.md);
 *                 u8 n, n x { str name, u8 type, value }  parameters:
 *                   INT: i64; CHAR: u8; F32: u32 bits; F64: u64 bits;
 *                   C64: 2 x u32 bits; C128: 2 x u64 bits; STR: str
 *                 u8 n, n x { str name, u8 role, u8 elem size, u64 count,
 *                             16 bytes digest (XXH3-128: low64, high64) }
 *                 u8 n, n x { u64 module id, u64 offset }  call site frames,
 *                   innermost first; module id = XXH3_64 of the module's
 *                   file name (basename), so it is stable across machines.
 *                   A Python frame (the innermost one of the calling
 *                   thread, CPython 3.11) comes last, as module id
 *                   TRACE_PYTHON_MODULE, offset = XXH3_64 of its SITE
 *                   strings ("FILE:LINE" and its NUL, then the function).
 *                 u8 n, n x { str key, str value }  notes: decisions and
 *                   remarks (e.g. "blas.mode" = "passthrough").
 *   SITE          u64 module id, u64 offset, str module name, str symbol.
 *                 Written once per frame address per thread; metadata only.
 *                 For a Python frame: "FILE:LINE" (FILE relative to its
 *                 sys.path entry) and the function's qualified name.
 *   THREAD_END    u64 record count (every call of the stream, summarized
 *                 windows included), 32 bytes stream head.
 *   WINDOW        u64 index of the window's first record (in its stream),
 *                 u32 record count, 32 bytes window digest: the records of
 *                 one window of a summary trace ([trace] level = summary),
 *                 written in their place. A window is either all of its
 *                 RECORD frames or one WINDOW frame; only the last window of
 *                 a stream may hold fewer than the window size.
 *   PROCESS_END   u32 thread count, 32 bytes process root.
 *   SPARE         TRACE_SPARE_LEN zero bytes, written with the header: room
 *                 already on disk, so that a writer that must stop early can
 *                 say why even when the disk is full. Readers skip it.
 *   INCOMPLETE    str reason, zero bytes to TRACE_SPARE_LEN: written over
 *                 the SPARE frame (same offset, same length) when the writer
 *                 stopped early or lost records: the disk was full, a write
 *                 was short, a call came after the trace closed at exit, a
 *                 thread was inside the shim when the process exited. The
 *                 file is then not the whole process, whatever follows.
 *   str = u8 length, bytes (no terminator).
 *
 * Record hashes, chain and roots:
 *   record hash   in a calls or entropy stream, h(i) = the frame hash of
 *                 RECORD payload i (XXH3-128, 16 bytes: low64, high64),
 *                 the algorithm of the operand digests the payload holds,
 *                 so such a record is bound as strongly as its operands;
 *                 in an identity stream (TRACE_THREAD_IDENTITY), h(i) =
 *                 SHA256(payload i), 32 bytes, so the files and code it
 *                 names (by SHA-256 or build id) stay SHA-256 up to the
 *                 root (docs/security.md#what-the-root-binds).
 *   windows       a stream's records are grouped by position into windows
 *                 of W records (TRACE_FIELD_WINDOW): window k holds records
 *                 kW .. kW+W-1, the last one what is left.
 *   window digest SHA256("detshim.window.v3" || h(first) || ... ||
 *                 h(last)), over the window's records only, in order (a
 *                 stream's hashes all have one length); one SHA-256 per
 *                 window, 16 bytes of input per call record
 *   stream head   s0 = SHA256("detshim.stream.v2");
 *                 s(k+1) = SHA256(s(k) || window digest k)
 *                 so a full trace and a summary trace of the same run have
 *                 the same heads and roots, and a reader recomputes the
 *                 head of a summary stream from its WINDOW frames.
 *   process root  SHA256("detshim.process.v1" || every compared header field
 *                 as {u16 key, u32 len, bytes} in file order ||
 *                 for each thread stream but real-entropy ones, sorted by
 *                 (head, count):
 *                 u64 count || head), count being the stream's records,
 *                 summarized ones included
 *   run root      SHA256("detshim.run.v1" || for each process sorted by
 *                 name: name || 0x00 || process root)
 * Threads are sorted by content, so the order in which threads start or
 * interleave never changes a root.
 */
#ifndef DETSHIM_TRACE_FORMAT_H
#define DETSHIM_TRACE_FORMAT_H

#define TRACE_MAGIC "DETSHIMT"
#define TRACE_MAGIC_LEN 8
/* 2: roots over window digests, WINDOW frames (summary traces).
 * 3: window digests over record hashes (XXH3-128), frame checks from the
 * frame hash. A reader refuses older versions with one line: their roots
 * mean something else. */
#define TRACE_VERSION 3u
#define TRACE_FILE_SUFFIX ".dtrace"
#define TRACE_FILE_HEADER_LEN 16u /* magic + version + field block length */
#define TRACE_FRAME_HEADER_LEN 16u
#define TRACE_MAX_FRAME 65536u    /* a payload larger than this is corrupt */
#define TRACE_MAX_HEADER 65536u

#define TRACE_DIGEST_ALGS "operands=xxh3-128;records=xxh3-128;chain=sha256"
#define TRACE_CHAIN_SEED "detshim.window.v3" /* a window's digest */
#define TRACE_STREAM_SEED "detshim.stream.v2" /* a stream's head over windows */
#define TRACE_WINDOW_DEFAULT 4096u /* [trace] window */
#define TRACE_WINDOW_FRAME_LEN 44u /* WINDOW payload: u64, u32, 32 bytes */
#define TRACE_PROCESS_SEED "detshim.process.v1"
#define TRACE_RUN_SEED "detshim.run.v1"

enum trace_field_key {
    TRACE_FIELD_DIGEST_ALGS = 1,
    TRACE_FIELD_PROGRAM = 2,      /* basename of the executable */
    TRACE_FIELD_PROCESS = 3,      /* deterministic process name */
    TRACE_FIELD_POLICY_NAME = 4,
    TRACE_FIELD_POLICY_DIGEST = 5, /* SHA-256 of the policy file, hex */
    TRACE_FIELD_SHIM_VERSION = 6,
    TRACE_FIELD_ARGS = 7,         /* informational: command line */
    TRACE_FIELD_PID = 8,          /* informational */
    TRACE_FIELD_HOST = 9,         /* informational */
    TRACE_FIELD_START_TIME = 10,  /* informational, seconds since epoch */
    TRACE_FIELD_SETTINGS = 11,    /* the environment the policy pinned:
                                   * "NAME=value\n" per variable, in policy
                                   * order (the start-up hook's PYTHONPATH
                                   * entry as "PYTHONPATH=(detshim hook)",
                                   * so install paths never differ) */
    TRACE_FIELD_SETTINGS_ORIGIN = 12, /* informational: "NAME: who won\n" */
    TRACE_FIELD_SEED = 13,        /* the seed pinned randomness derives from */
    TRACE_FIELD_DEVICE_DIGEST = 14, /* informational: how device operands are
                                     * digested (TRACE_DEVICE_DIGEST); the
                                     * digests agree whatever the method */
    TRACE_FIELD_INTERPOSITION = 15, /* informational: how calls reach the shim
                                     * (TRACE_INTERPOSITION_*): with the audit
                                     * module, CUDA functions looked up with
                                     * dlsym are seen too */
    TRACE_FIELD_ENTROPY_RULE = 16, /* present only when this process's entropy
                                    * is real throughout, and why (a
                                    * never-pin program, a Python without
                                    * its start-up hook: docs/security.md) */
    TRACE_FIELD_CPU = 17,          /* informational: "model=...;isa=<features,
                                    * comma-separated>;cores=<n>" */
    TRACE_FIELD_WINDOW = 20,       /* records per window, decimal ([trace]
                                    * window): the roots are over windows of
                                    * this size, so it is compared */
    TRACE_FIELD_LEVEL = 21,        /* informational: "full", "summary", or
                                    * "summary, full in window [S:]K"; never
                                    * compared: levels agree on the root */
    TRACE_FIELD_PYTHON_SITES = 22, /* informational, in Python processes only:
                                    * whether records carry Python frames, or
                                    * why not (an unsupported CPython) */
    TRACE_FIELD_CANONICAL_ORDERS = 23, /* under [blas] mode = canonical only:
                                        * the versions of the canonical
                                        * kernels' evaluation orders
                                        * (TRACE_CANONICAL_ORDERS), compared:
                                        * another version gives other bits */
    TRACE_FIELD_COMPRESSION = 24,  /* informational, only when records are
                                    * compressed: "zstd" (ZSTD frames) */
};

/* The canonical BLAS contract's order versions (docs/canonical-blas.md,
 * "Order versions"): a routine family whose documented order changed
 * gets a new number here, so that two traces made under different orders
 * differ in their header before any call does. */
#define TRACE_CANONICAL_ORDERS "lanes=2;snrm2=2;trsm=2;hemm=1;herk=1;rot=1;sym=1;other=1"


#define TRACE_INTERPOSITION_AUDIT \
    "LD_PRELOAD and LD_AUDIT: CUDA library functions looked up with dlsym are seen too"
#define TRACE_INTERPOSITION_PRELOAD \
    "LD_PRELOAD only: CUDA library functions looked up with dlsym (TensorFlow, JAX) are not seen"
/* Appended to either (issue 19): one vendor library's own
 * calls into another stay unseen, as cuDNN 9's engines look cublasLtMatmul
 * up themselves (docs/gpu.md). A reader matches the two above as
 * prefixes. */
#define TRACE_INTERPOSITION_VENDOR \
    "; cuDNN's engines call cuBLASLt themselves: those GEMMs are not seen, " \
    "their determinism is the engine's (cudnnBackendExecute records it)"

/* How device operands are digested (shim/cuda/devdigest.c): by the
 * embedded PTX kernel on the call's stream when the build had nvcc, else
 * copied to the host and digested there. Either way equal to host digests
 * of the same bytes, collected asynchronously (the record waits in its
 * thread's FIFO until the digests' events complete). */
#ifdef DETSHIM_DIGEST_KERNEL
#define TRACE_DEVICE_DIGEST "xxh3-128 by a device kernel (4 KiB and more; copy-and-hash below, " \
                            "or where the kernel cannot load), collected asynchronously"
#else
#define TRACE_DEVICE_DIGEST "xxh3-128 copy-and-hash (cuMemcpyDtoHAsync, then an event), " \
                            "collected asynchronously"
#endif

/* The module id of Python call-site frames: XXH3_64 of "<python>". */
#define TRACE_PYTHON_MODULE 0xea2bf6fe5c3a5c08ull

#define TRACE_FIELD_INFO 0x1u
#define TRACE_THREAD_ENTROPY 0x80000000u
#define TRACE_THREAD_IDENTITY 0x40000000u
#define TRACE_THREAD_REAL 0x20000000u

enum trace_frame_type {
    TRACE_FRAME_RECORD = 1,
    TRACE_FRAME_SITE = 2,
    TRACE_FRAME_THREAD_END = 3,
    TRACE_FRAME_PROCESS_END = 4,
    TRACE_FRAME_SPARE = 5,
    TRACE_FRAME_INCOMPLETE = 6,
    TRACE_FRAME_WINDOW = 7,
    TRACE_FRAME_ZSTD = 8, /* one zstd frame whose content is whole frames of
                           * the other types, as they would have been written
                           * ([trace] compress = zstd); only in a file whose
                           * header has TRACE_FIELD_COMPRESSION */
};
/* A ZSTD frame's content is at most this many bytes, and the frame
 * itself (header and payload) is smaller than its content: it is written
 * only then. */
#define TRACE_MAX_ZSTD_CONTENT (1024u * 1024u)

#define TRACE_SPARE_LEN 240u

enum trace_param_type {
    TRACE_PARAM_INT = 1,
    TRACE_PARAM_CHAR = 2,
    TRACE_PARAM_F32 = 3,
    TRACE_PARAM_F64 = 4,
    TRACE_PARAM_C64 = 5,
    TRACE_PARAM_C128 = 6,
    TRACE_PARAM_STR = 7,
};

enum trace_operand_role {
    TRACE_ROLE_IN = 1,  /* digest taken before the call */
    TRACE_ROLE_OUT = 2, /* digest taken after the call */
};

#define TRACE_MAX_PARAMS 32
#define TRACE_MAX_OPERANDS 16
#define TRACE_MAX_FRAMES 16
#define TRACE_MAX_NOTES 16

#endif
