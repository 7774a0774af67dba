"""torch.distributed collectives into the trace, for the start-up hook
(sitecustomize.py imports this module and calls install). gloo, the CPU
backend, has no C API the shim can interpose (NCCL's calls are
intercepted in C, shim/nccl), so when the process is traced this module,
right after torch is imported:

- wraps torch.distributed's all_reduce, broadcast, reduce, all_gather and
  barrier: each call on CPU tensors becomes one record with the group's
  identity, the caller's rank in it, the call's ordinal on the group, and
  digests of what it reads before and writes after (computed in C,
  detshim_digest_buffer). An async_op call is waited for before it
  returns its Work, so it is recorded complete; the results are the same.
- registers a DDP communication hook at a model's first forward, when the
  program registered none: the Reducer's gradient all-reduce of each
  bucket is then recorded the same way (api ddp.allreduce). The hook
  scales the bucket by 1/world size and all-reduces it, the arithmetic of
  DDP's own path (the Reducer multiplies by 1/world size as it fills the
  bucket), so results do not change; it waits for each bucket's
  all-reduce, which gives up DDP's overlap of communication with the
  backward pass (traced runs only).
- a hook the program registers itself (register_comm_hook, before its
  first forward, as DDP requires) is kept and wrapped: the bucket before it
  and the tensor its future returns are recorded (api ddp.comm_hook). A
  builtin hook (_register_builtin_comm_hook) runs in C++ and is not
  recorded.

Records are made on the thread that calls (the main thread for DDP on the
CPU), so they join that thread's chain. docs/collectives.md."""
import os
import sys

_counters = {}


def _lib():
    import ctypes
    lib = ctypes.CDLL(None)
    digest = lib.detshim_digest_buffer
    digest.argtypes = (ctypes.c_void_p, ctypes.c_ulonglong, ctypes.c_ulonglong * 2)
    record = lib.detshim_dist_record
    pair = ctypes.POINTER(ctypes.c_ulonglong * 2)
    record.argtypes = (ctypes.c_char_p, ctypes.c_char_p, ctypes.c_longlong, ctypes.c_longlong,
                       ctypes.c_longlong, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulonglong,
                       ctypes.c_int, pair, ctypes.c_ulonglong, pair, ctypes.c_ulonglong,
                       ctypes.c_char_p)
    return ctypes, digest, record


class _Recorder:
    def __init__(self, dist):
        self.dist = dist
        self.ctypes, self.digest_fn, self.record_fn = _lib()

    def group_id(self, group):
        """'world', or 'group:' and the group's global ranks: the same on
        every rank of the group and in every run."""
        dist = self.dist
        if group is None or group is getattr(dist, "GroupMember", None) and group is \
                dist.GroupMember.WORLD:
            return "world"
        try:
            from torch.distributed import distributed_c10d as c10d
            if group is c10d._get_default_group():
                return "world"
            ranks = sorted(c10d._pg_group_ranks[group].keys())
            return "group:" + ",".join(str(r) for r in ranks)
        except Exception:
            return "group"

    def digest(self, tensors):
        """The digest of the tensors' bytes, one after another, or None
        when one is not a tensor on the CPU."""
        data = []
        for t in tensors:
            if not hasattr(t, "device") or t.device.type != "cpu":
                return None
            c = t.detach().contiguous()
            data.append((c, c.data_ptr(), c.numel() * c.element_size()))
        out = (self.ctypes.c_ulonglong * 2)()
        if len(data) == 1:
            self.digest_fn(data[0][1], data[0][2], out)
            return out
        parts = bytearray()
        for _, ptr, n in data:
            one = (self.ctypes.c_ulonglong * 2)()
            self.digest_fn(ptr, n, one)
            parts += int(one[0]).to_bytes(8, "little") + int(one[1]).to_bytes(8, "little")
        buf = (self.ctypes.c_char * len(parts)).from_buffer(parts)
        self.digest_fn(self.ctypes.addressof(buf), len(parts), out)
        return out

    def op_name(self, op):
        """'sum', 'max'...: ReduceOp's own str() is an address in 1.13."""
        if op is None:
            return ""
        for name in ("SUM", "AVG", "PRODUCT", "MIN", "MAX", "BAND", "BOR", "BXOR",
                     "PREMUL_SUM"):
            value = getattr(self.dist.ReduceOp, name, None)
            try:
                if value is not None and op == value:
                    return name.lower()
            except TypeError:
                pass
        return "other"

    def record(self, api, group, op, tensors_in, din, tensors_out, dout, note=None):
        dist = self.dist
        comm = self.group_id(group)
        coll = _counters.get(comm, 0)
        _counters[comm] = coll + 1
        first = (tensors_out or tensors_in or [None])[0]
        dtype = str(getattr(first, "dtype", "none")).replace("torch.", "")
        elem = first.element_size() if first is not None else 0
        count = sum(t.numel() for t in (tensors_in or tensors_out or []))
        opname = self.op_name(op)
        kw = {} if group is None else {"group": group}
        pair = self.ctypes.POINTER(self.ctypes.c_ulonglong * 2)
        self.record_fn(api.encode(), comm.encode(), dist.get_rank(**kw),
                       dist.get_world_size(**kw), coll, dtype.encode(), opname.encode(),
                       count, elem, self.ctypes.cast(din, pair) if din else None,
                       sum(t.numel() for t in tensors_in or []),
                       self.ctypes.cast(dout, pair) if dout else None,
                       sum(t.numel() for t in tensors_out or []),
                       note.encode() if note else None)


def _wrap(rec, module, name, reads, writes, has_op):
    """Replaces module.name with a recording wrapper. reads(args, kw) and
    writes(args, kw) pick the tensors the call reads and writes."""
    real = getattr(module, name, None)
    if real is None or getattr(real, "detshim_dist", False):
        return

    def wrapper(*args, **kw):
        ins = reads(args, kw)
        din = rec.digest(ins) if ins else None
        result = real(*args, **kw)
        if kw.get("async_op") and result is not None:
            result.wait()
        outs = writes(args, kw)
        dout = rec.digest(outs) if outs else None
        if (ins and din is None) or (outs and dout is None):
            return result  # not CPU tensors: another backend's business
        group = kw.get("group", args[_GROUP_POS[name]] if len(args) > _GROUP_POS[name] else None)
        op = kw.get("op", args[_OP_POS[name]] if has_op and len(args) > _OP_POS[name] else None)
        if has_op and op is None:
            op = rec.dist.ReduceOp.SUM
        rec.record("torch.distributed." + name, group, op, ins, din, outs, dout)
        return result

    wrapper.detshim_dist = True
    wrapper.__wrapped__ = real
    wrapper.__name__ = name
    wrapper.__doc__ = real.__doc__
    setattr(module, name, wrapper)


# Where group and op sit among each function's positional arguments.
_GROUP_POS = {"all_reduce": 2, "broadcast": 2, "reduce": 3, "all_gather": 2, "barrier": 0}
_OP_POS = {"all_reduce": 1, "reduce": 2}


def _tensor(pos):
    return lambda args, kw: [kw["tensor"] if "tensor" in kw else args[pos]]


def _patch_functions(rec, dist):
    from torch.distributed import distributed_c10d as c10d
    for module in (dist, c10d):
        _wrap(rec, module, "all_reduce", _tensor(0), _tensor(0), True)
        _wrap(rec, module, "broadcast", _tensor(0), _tensor(0), False)
        _wrap(rec, module, "reduce", _tensor(0), _tensor(0), True)
        _wrap(rec, module, "all_gather",
              lambda a, k: [k["tensor"] if "tensor" in k else a[1]],
              lambda a, k: list(k["tensor_list"] if "tensor_list" in k else a[0]), False)
        _wrap(rec, module, "barrier", lambda a, k: [], lambda a, k: [], False)


def _patch_ddp(rec, torch):
    DDP = torch.nn.parallel.DistributedDataParallel
    if getattr(DDP, "detshim_dist", False):
        return
    dist = rec.dist
    real_register = DDP.register_comm_hook
    real_builtin = getattr(DDP, "_register_builtin_comm_hook", None)
    real_forward = DDP.forward

    all_reduce = getattr(dist.all_reduce, "__wrapped__", dist.all_reduce)

    def ours(pg):
        def allreduce(state, bucket):
            t = bucket.buffer()
            t.mul_(1.0 / dist.get_world_size(group=pg))
            din = rec.digest([t])
            all_reduce(t, group=pg)
            rec.record("ddp.allreduce", pg, dist.ReduceOp.SUM, [t], din, [t], rec.digest([t]),
                       "detshim's DDP hook: bucket * 1/world size, all_reduce, waited for")
            fut = torch.futures.Future()
            fut.set_result(t)
            return fut
        return allreduce

    def wrapped(hook, pg):
        def recording(state, bucket):
            t = bucket.buffer()
            din = rec.digest([t])
            fut = hook(state, bucket)
            value = fut.wait()
            out = value[0] if isinstance(value, (list, tuple)) else value
            rec.record("ddp.comm_hook", pg, None, [t], din, [out], rec.digest([out]),
                       "the program's DDP hook %s" % getattr(hook, "__qualname__", "?"))
            return fut
        recording.__qualname__ = getattr(hook, "__qualname__", "hook")
        return recording

    def register_comm_hook(self, state, hook):
        self.detshim_hook = "program"
        return real_register(self, state, wrapped(hook, self.process_group))

    def register_builtin(self, comm_hook_type):
        self.detshim_hook = "builtin"
        return real_builtin(self, comm_hook_type)

    def forward(self, *args, **kw):
        if getattr(self, "detshim_hook", None) is None:
            self.detshim_hook = "detshim"
            real_register(self, None, ours(self.process_group))
        return real_forward(self, *args, **kw)

    DDP.register_comm_hook = register_comm_hook
    if real_builtin is not None:
        DDP._register_builtin_comm_hook = register_builtin
    DDP.forward = forward
    DDP.detshim_dist = True


def _apply(torch):
    try:
        dist = torch.distributed
        if not dist.is_available():
            return
        rec = _Recorder(dist)
    except (AttributeError, OSError, ImportError):
        return  # a torch without distributed, or no shim in this process
    _patch_functions(rec, dist)
    _patch_ddp(rec, torch)


def install(finder_class):
    """Called by sitecustomize: waits for torch's import when the process
    is traced by the shim (once, whichever copy of the hook calls). The
    module leaves sys.modules again: a program listing its modules sees
    what it would without the hook, but for sitecustomize."""
    sys.modules.pop(__name__, None)
    if "libdetshim" not in os.environ.get("LD_PRELOAD", "") or not os.environ.get("DETSHIM_TRACE"):
        return
    if "torch" in sys.modules:
        _apply(sys.modules["torch"])
    elif not any(getattr(f, "detshim_dist", False) for f in sys.meta_path):
        finder = finder_class("torch", _apply)
        finder.detshim_dist = True
        sys.meta_path.insert(0, finder)
