"""What a framework computes, in the trace: detshim's step and op records
(docs/frameworks.md). sitecustomize.py imports it, and calls hook(),
right after the program imports torch, keras or jax; it then describes
the framework's work to the shim over ctypes (detshim_framework_* in
shim/framework/framework.c), which digests every tensor in C and puts the
record on the calling thread's chain.

- Step records (DETSHIM_TRACE_STEPS=on, from [trace] steps): after every
  optimizer step, the step number and the digest of every parameter and
  optimizer-state tensor by name.
    PyTorch  torch.optim's post-step seam (a global post-step hook where
             torch has one, else Optimizer._optimizer_step_code, which
             every 1.13 optimizer calls after its step). Tensors on the
             current CUDA device are digested there, on the current stream,
             without waiting for it (detshim_framework_step_cuda); others
             on the host, from a copy where they are not in host memory.
    Keras    a callback added to Model.fit: after every train-function
             call, i.e. every steps_per_execution steps; and after every
             Model.train_on_batch call.
    JAX      a jax.jit'd (or jax.pmap'd) call that returns, in place of some of its
             arguments, pytrees of the same structure, shapes and dtypes
             (params and optimizer state in, params and state out): the
             user's training step, with optax or without.
- Op records (DETSHIM_TRACE_OPS=on, from [trace] ops): every ATen op
  through a TorchDispatchMode, and every jax.jit'd call, with the Python
  frame that issued it (path relative to its sys.path entry), and the
  counts of the tensors a record had no room for.

Nothing here imports a framework, and nothing runs when the process has no
trace."""
import operator
import os
import sys
import weakref

_STEPS = os.environ.get("DETSHIM_TRACE_STEPS") == "on"
_OPS = os.environ.get("DETSHIM_TRACE_OPS") == "on"
ROLE_IN, ROLE_OUT = 1, 2
_MAX_OPERANDS = 16  # in one record (TRACE_MAX_OPERANDS)
_MAX_OP_INPUTS = 8  # an op record: up to 8 inputs, then outputs in the rest
_HERE = os.path.dirname(os.path.abspath(__file__))

_shim = None
_is = operator.is_


class _Shim:
    """The exported detshim_framework_* functions, with their types."""

    def __init__(self, ctypes, lib):
        c = ctypes
        self.begin = lib.detshim_framework_begin
        self.begin.argtypes, self.begin.restype = (c.c_char_p,), c.c_int
        self.int = lib.detshim_framework_int
        self.int.argtypes, self.int.restype = (c.c_char_p, c.c_int64), None
        self.str = lib.detshim_framework_str
        self.str.argtypes, self.str.restype = (c.c_char_p, c.c_char_p), None
        self.tensor = lib.detshim_framework_tensor
        self.tensor.argtypes = (c.c_char_p, c.c_int, c.c_void_p, c.c_int64, c.c_int,
                                c.POINTER(c.c_int64), c.POINTER(c.c_int64))
        self.tensor.restype = c.c_int
        self.end = lib.detshim_framework_end
        self.end.argtypes, self.end.restype = (), c.c_int
        self.many = lib.detshim_framework_tensors
        self.many.argtypes = (c.c_int, c.c_void_p, c.c_void_p, c.c_void_p, c.c_void_p,
                              c.c_void_p, c.c_void_p, c.c_void_p)
        self.many.restype = c.c_int
        self.step = lib.detshim_framework_step  # a whole step record
        self.step.argtypes = (c.c_char_p, c.c_char_p, c.c_int64) + self.many.argtypes
        self.step.restype = c.c_int
        # A step record of tensors on the GPU, digested there (framework_cuda.c).
        self.step_cuda = getattr(lib, "detshim_framework_step_cuda", None)
        if self.step_cuda is not None:
            self.step_cuda.argtypes = self.step.argtypes + (c.c_void_p, c.c_size_t)
            self.step_cuda.restype = c.c_int
        self.dims = c.c_int64 * 8
        self.ctypes = c

    def put(self, name, role, ptr, elem, shape, strides):
        """One tensor at ptr: shape and strides in elements, at most 8
        dims ((n,) and (1,) for n packed elements)."""
        return self.tensor(name.encode("utf-8", "replace"), role, ptr, elem, len(shape),
                           self.dims(*shape), self.dims(*strides))


class _Batch:
    """Many tensors laid out once for detshim_framework_tensors, one C
    call per record: names, roles, element sizes, shapes and strides as
    ctypes arrays, built when the set of tensors or a layout changes and
    kept; put() then passes only this record's data pointers."""

    def __init__(self, shim, items):
        """items: (name, role, elem, shape, strides) each, shape and
        strides in elements (at most 8 dims; shape (n,) strides (1,) for
        n packed elements)."""
        c, n = shim.ctypes, len(items)
        self.shim, self.n = shim, n
        self.names = (c.c_char_p * n)(*(i[0].encode("utf-8", "replace") for i in items))
        self.roles = (c.c_int * n)(*(i[1] for i in items))
        self.elems = (c.c_int64 * n)(*(i[2] for i in items))
        self.ndims = (c.c_int * n)(*(len(i[3]) for i in items))
        self.shapes = (c.c_int64 * (8 * n))()
        self.strides = (c.c_int64 * (8 * n))()
        for k, item in enumerate(items):
            self.shapes[8 * k:8 * k + len(item[3])] = item[3]
            self.strides[8 * k:8 * k + len(item[4])] = item[4]
        self.ptrs = c.c_void_p * n

    def put(self, ptrs):
        """Digests the tensors at ptrs (in the items' order) into the open
        record; returns how many were taken."""
        return self.shim.many(self.n, self.names, self.roles, self.ptrs(*ptrs), self.elems,
                              self.ndims, self.shapes, self.strides)

    def step(self, framework, optimizer, count, ptrs):
        """A whole step record of these tensors in one C call (no record
        open): what _begin("step", ...), put() and end make."""
        return self.shim.step(framework, optimizer, count, self.n, self.names, self.roles,
                              self.ptrs(*ptrs), self.elems, self.ndims, self.shapes,
                              self.strides)

    def step_cuda(self, framework, optimizer, count, ptrs, on_device, stream):
        """The same record where the tensors flagged in on_device (a ctypes
        int array) lie on the current CUDA device: digested there, on
        `stream`, after the work queued on it (nothing waits)."""
        return self.shim.step_cuda(framework, optimizer, count, self.n, self.names, self.roles,
                                   self.ptrs(*ptrs), self.elems, self.ndims, self.shapes,
                                   self.strides, on_device, stream)


def _reach_shim():
    global _shim
    if _shim is None:
        try:
            import ctypes
            _shim = _Shim(ctypes, ctypes.CDLL(None))
        except (ImportError, OSError, AttributeError):
            _shim = False
    return _shim


_complained = set()


def _failed(what, err):
    """A record that could not be made: said once per kind, on one line;
    the program goes on (the trace then lacks those records)."""
    if what not in _complained:
        _complained.add(what)
        sys.stderr.write("detshim: could not record a %s (%s: %s); the program goes on and "
                         "the trace lacks those records\n" % (what, type(err).__name__, err))


def _begin(kind, params):
    """Starts a record; params are (name, int or str) pairs. False when
    nothing will be recorded."""
    shim = _reach_shim()
    if not shim or shim.begin(kind.encode()) != 0:
        return False
    for name, value in params:
        if isinstance(value, int):
            shim.int(name.encode(), value)
        else:
            shim.str(name.encode(), value.encode("utf-8", "replace")[:255])
    return True


def _op_room(nins):
    """How many outputs an op record of nins inputs holds."""
    return _MAX_OPERANDS - min(nins, _MAX_OP_INPUTS)


def _end_op(nins, nouts):
    """Ends an op record, saying in it how many inputs and outputs it left
    out (dropped_in, dropped_out: only when it left some out)."""
    if nins > _MAX_OP_INPUTS:
        _shim.int(b"dropped_in", nins - _MAX_OP_INPUTS)
    if nouts > _op_room(nins):
        _shim.int(b"dropped_out", nouts - _op_room(nins))
    _shim.end()


# ---- numpy arrays (Keras, JAX) --------------------------------------------

def _host_array(a, np):
    """a as a packed numpy array, or None for one of Python objects."""
    a = np.asarray(a)
    if a.dtype.hasobject:
        return None
    return a if a.flags.c_contiguous else np.ascontiguousarray(a)


def _put_array(name, role, a, np):
    a = _host_array(a, np)
    if a is not None:
        _shim.put(name, role, a.ctypes.data, a.itemsize, (a.size,), (1,))


def _put_arrays(named, np):
    """Every (name, array) of a step record, as outputs, in one C call."""
    arrays = [(name, _host_array(a, np)) for name, a in named]
    arrays = [(name, a) for name, a in arrays if a is not None]
    batch = _Batch(_shim, [(name, ROLE_OUT, a.itemsize, (a.size,), (1,)) for name, a in arrays])
    batch.put([a.ctypes.data for _, a in arrays])


# ---- where a call came from ------------------------------------------------

_rel_cache = {}


def _relative(filename):
    """filename relative to the longest sys.path entry (the script's folder
    is the first) it lies under, so another working directory or install
    prefix names it alike; its base name where none holds it."""
    rel = _rel_cache.get(filename)
    if rel is None:
        rel = filename
        if not filename.startswith("<"):
            path, best = os.path.abspath(filename), ""
            for entry in sys.path:
                if not isinstance(entry, str):
                    continue
                root = os.path.abspath(entry or os.curdir)
                if path.startswith(root.rstrip(os.sep) + os.sep) and len(root) > len(best):
                    best = root
            rel = os.path.relpath(path, best) if best else os.path.basename(path)
        _rel_cache[filename] = rel
    return rel


def _site(skip_dirs):
    """The innermost Python frame outside the framework and this hook, as
    "file:line in function"."""
    frame = sys._getframe(2)
    while frame is not None:
        name = frame.f_code.co_filename
        if not (name.startswith(skip_dirs) or name.startswith("<frozen")):
            return "%s:%d in %s" % (_relative(name), frame.f_lineno, frame.f_code.co_name)
        frame = frame.f_back
    return "?"


# ---- PyTorch ---------------------------------------------------------------

_torch = None


def _put_torch(name, role, t):
    lay = _torch_layout(t)
    if lay is False:
        return
    if lay is None:
        t = _torch_packed(t)
        lay = t.element_size(), (t.numel(),), (1,)
    _shim.put(name, role, t.data_ptr(), *lay)


class _TorchNames:
    """Parameter names, from the modules whose parameters() or
    named_parameters() the program asked for (an optimizer is built from
    them): the largest module's names win."""

    def __init__(self, torch):
        import weakref
        self.modules = weakref.WeakSet()
        module = torch.nn.Module
        for attr in ("parameters", "named_parameters"):
            self._watch(module, attr)

    def _watch(self, cls, attr):
        real = getattr(cls, attr)
        seen = self.modules

        def watched(self, *args, **kwargs):
            seen.add(self)
            return real(self, *args, **kwargs)
        setattr(cls, attr, _like(watched, real))

    def of(self, optimizer):
        names = {}
        params = {id(p) for g in optimizer.param_groups for p in g["params"]}
        for m in sorted(self.modules, key=lambda m: -sum(1 for _ in m.modules())):
            for name, p in m.named_parameters.__wrapped__(m):
                if id(p) in params:
                    names.setdefault(id(p), name)
        return names


_quiet = []  # non-empty while a step is recorded: its own ops are not the program's


def _record_torch_step(torch, names, optimizer):
    _quiet.append(1)
    try:
        _record_torch_step_now(torch, names, optimizer)
    except Exception as err:
        _failed("torch step record", err)
    finally:
        _quiet.pop()


def _torch_step_tensors(optimizer, Tensor):
    """Every parameter of every group, then every tensor of their state,
    each parameter's by key: the tensors of a step record, in order."""
    params = [p for group in optimizer.param_groups for p in group["params"]]
    state = optimizer.state
    tensors = list(params)
    for p in params:
        s = state.get(p)
        if s:
            tensors.extend(v for k, v in sorted(s.items(), key=_str_key) if isinstance(v, Tensor))
    return tensors


def _str_key(item):
    return str(item[0])


def _torch_layout(t):
    """What the digest walks for t as it lies: (elem, shape, strides), or
    None when it cannot be read in place (not on the CPU, lazy conj/neg
    bits, a layout the digest cannot walk): then a packed host copy is
    digested, and False when t has no elements to digest."""
    if t.layout != _torch.strided or t.is_quantized or t.device.type == "meta":
        return False  # no elements to digest (meta), or not a plain array
    if t.device.type != "cpu":
        return None
    return _in_place(t)


def _in_place(t):
    """(elem, shape, strides) of t where it lies, or None (lazy conj/neg
    bits, a layout the digest cannot walk)."""
    if t.is_conj() or t.is_neg():
        return None
    if t.is_contiguous():
        return t.element_size(), (t.numel(),), (1,)
    if t.dim() <= 8 and min(t.stride()) >= 0:
        return t.element_size(), tuple(t.shape), t.stride()
    return None


def _torch_device_layout(t, device):
    """What the device digest walks for t in the memory of CUDA device
    `device` (the current one), as _torch_layout for a host tensor; None
    when t must be copied to the host instead (another device, or
    _in_place's reasons)."""
    if t.device.type != "cuda" or t.device.index != device:
        return None
    return _in_place(t)


def _cuda_device():
    """The current CUDA device of this thread, or None where the shim
    cannot digest on the GPU (CUDA not started, or a shim without it)."""
    cuda = getattr(_torch, "cuda", None)
    if _shim.step_cuda is None or cuda is None or not cuda.is_initialized():
        return None
    return cuda.current_device()


def _torch_packed(t):
    """A packed host copy of t with its values (conj and neg resolved)."""
    if t.is_conj() or t.is_neg():
        t = t.resolve_conj().resolve_neg()
    return t.detach().cpu().contiguous()


class _TorchPlan:
    """One optimizer's step record, laid out once (names, element sizes,
    shapes, strides: a _Batch) and kept while its tensors stay the same
    objects with the same data pointers, shapes, strides and dtypes; a
    change (a new param group, state made at the first step, a
    parameter's .data replaced) lays it out again."""

    def __init__(self, optimizer, names, tensors, key):
        params = [p for group in optimizer.param_groups for p in group["params"]]
        ids = [id(p) for p in params]
        cached = getattr(optimizer, "_detshim_names", None)
        if cached is None or cached[0] != ids:  # names are kept while the params are
            cached = optimizer._detshim_names = (ids, names.of(optimizer))
        known, labels = cached[1], []
        for g, group in enumerate(optimizer.param_groups):
            for i, p in enumerate(group["params"]):
                labels.append(known.get(id(p)) or "group%d.param%d" % (g, i))
        state, Tensor = optimizer.state, _torch.Tensor
        for label, p in zip(labels[:len(params)], params):
            for k, v in sorted((state.get(p) or {}).items(), key=_str_key):
                if isinstance(v, Tensor):
                    labels.append("state.%s.%s" % (label, k))
        self.tensors, self.key = tensors, key
        self.device = _cuda_device()
        self.copied = []  # indices (into the kept tensors) digested from a packed copy
        self.kept = []    # indices into tensors that are digested
        on_device = []    # per kept tensor: 1 when digested on the GPU
        items = []
        for i, (label, t) in enumerate(zip(labels, tensors)):
            lay = _torch_layout(t)
            if lay is False:
                continue
            if lay is None and self.device is not None:
                lay = _torch_device_layout(t, self.device)
                on_device.append(int(lay is not None))
            else:
                on_device.append(0)
            if lay is None:
                c = _torch_packed(t)
                lay = c.element_size(), (c.numel(),), (1,)
                self.copied.append(len(self.kept))
            self.kept.append(i)
            items.append((label,) + (ROLE_OUT,) + lay)
        self.batch = _Batch(_shim, items)
        self.on_device = (_shim.ctypes.c_int * len(on_device))(*on_device) if any(on_device) \
            else None

    def put(self, key, head):
        """The step record of these tensors, head (framework, optimizer,
        step) first, in one C call."""
        tensors = self.tensors
        ptrs = [key[i][0] for i in self.kept]
        hold = []
        for k in self.copied:
            c = _torch_packed(tensors[self.kept[k]])
            hold.append(c)  # alive until digested
            ptrs[k] = c.data_ptr()
        if self.on_device is not None:
            stream = _torch.cuda.current_stream(self.device).cuda_stream
            self.batch.step_cuda(*head, ptrs, self.on_device, stream)
        else:
            self.batch.step(*head, ptrs)
        del hold


# Each optimizer's plan, beside it rather than on it: ctypes arrays of
# pointers cannot be pickled, and a program may pickle or deepcopy its
# optimizer.
_plans = weakref.WeakKeyDictionary()


def _torch_key(tensors):
    return [(t.data_ptr(), t.shape, t.stride(), t.dtype) for t in tensors]


def _record_torch_step_now(torch, names, optimizer):
    count = getattr(optimizer, "_detshim_steps", 0) + 1
    optimizer._detshim_steps = count
    if not _reach_shim():
        return
    with torch.no_grad():
        tensors = _torch_step_tensors(optimizer, torch.Tensor)
        key = _torch_key(tensors)
        plan = _plans.get(optimizer)
        if (plan is None or len(plan.tensors) != len(tensors) or plan.key != key or
                not all(map(_is, plan.tensors, tensors)) or plan.device != _cuda_device()):
            plan = _plans[optimizer] = _TorchPlan(optimizer, names, tensors, key)
        # The whole record in one C call: after a step each ctypes call
        # runs cold, some 8 us (docs/frameworks.md, Costs).
        kind = type(optimizer).__name__.encode("utf-8", "replace")[:255]
        plan.put(key, (b"torch", kind, count))


def _hook_torch_steps(torch):
    names = _TorchNames(torch)
    optim = sys.modules.get("torch.optim.optimizer")
    register = getattr(optim, "register_optimizer_step_post_hook", None)
    if register is not None:
        register(lambda opt, args, kwargs: _record_torch_step(torch, names, opt))
        return
    base = torch.optim.Optimizer
    real = base._optimizer_step_code

    def after_step(self):
        real(self)
        _record_torch_step(torch, names, self)
    base._optimizer_step_code = after_step


def _scalar(v):
    """A non-tensor argument as text: its value for numbers, strings and
    torch's dtypes, devices and layouts; its type name for anything else
    (a generator's repr holds its address, which differs run to run)."""
    if v is None or isinstance(v, (bool, int, float, complex, str)):
        return repr(v)
    if isinstance(v, (_torch.dtype, _torch.device, _torch.layout, _torch.memory_format)):
        return str(v)
    return type(v).__name__


def _hook_torch_ops(torch):
    from torch.utils._python_dispatch import TorchDispatchMode
    from torch.utils._pytree import tree_flatten
    skip = (os.path.dirname(torch.__file__) + os.sep, _HERE + os.sep)
    Tensor = torch.Tensor

    def describe(tensors):
        shapes = ";".join("[%s]" % ",".join(str(d) for d in t.shape) for t in tensors)
        dtypes = ";".join(str(t.dtype).replace("torch.", "") for t in tensors)
        return shapes, dtypes

    class DetshimOps(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            if _quiet:
                return func(*args, **kwargs)
            try:
                leaves = tree_flatten((args, kwargs))[0]
                ins = [t for t in leaves if isinstance(t, Tensor)]
                shapes, dtypes = describe(ins)
                # Scalars are the op's parameters too: add(x, 1) is not add(x, 2).
                scalars = ",".join(_scalar(v) for v in leaves if not isinstance(v, Tensor))
                on = _begin("op", [("op", str(func)), ("site", _site(skip)),
                                   ("shapes", shapes), ("dtypes", dtypes), ("scalars", scalars)])
                for i, t in enumerate(ins[:_MAX_OP_INPUTS] if on else ()):
                    _put_torch("in%d" % i, ROLE_IN, t)
            except Exception as err:
                _failed("torch op record", err)
                on = False
            out = func(*args, **kwargs)
            if on:
                try:
                    outs = [t for t in tree_flatten(out)[0] if isinstance(t, Tensor)]
                    for i, t in enumerate(outs[:_op_room(len(ins))]):
                        _put_torch("out%d" % i, ROLE_OUT, t)
                    _end_op(len(ins), len(outs))
                except Exception as err:
                    _failed("torch op record", err)
            return out

    DetshimOps().__enter__()  # for the whole program: never left
    # The mode is per thread: each thread threading starts enters it too,
    # through the documented start-of-thread hook, which then steps aside
    # (left alone when the program profiles its threads itself).
    import threading
    if getattr(threading, "_profile_hook", None) is None:
        def enter(frame, event, arg):
            sys.setprofile(None)
            DetshimOps().__enter__()
        threading.setprofile(enter)


def _hook_torch(torch):
    global _torch
    if not _reach_shim():
        return
    _torch = torch
    if _STEPS:
        _hook_torch_steps(torch)
    if _OPS:
        _hook_torch_ops(torch)


# ---- Keras -----------------------------------------------------------------

def _record_keras_step(model, np):
    optimizer = getattr(model, "optimizer", None)
    iterations = getattr(optimizer, "iterations", None)
    step = int(np.asarray(iterations)) if iterations is not None else -1
    if not _begin("step", [("framework", "keras"), ("step", step)]):
        return
    tensors = list(model.variables) + list(getattr(optimizer, "variables", None) or [])
    _put_arrays([(getattr(v, "path", None) or v.name, v.numpy() if hasattr(v, "numpy") else v)
                 for v in tensors], np)
    _shim.end()


def _hook_keras(keras):
    if not (_STEPS and _reach_shim()):
        return
    import numpy as np
    model_cls = getattr(keras, "Model", None)
    callback_cls = getattr(getattr(keras, "callbacks", None), "Callback", None)
    if model_cls is None or callback_cls is None:
        return

    class DetshimSteps(callback_cls):
        """After every train-function call: steps_per_execution steps."""

        def on_train_batch_end(self, batch, logs=None):
            try:
                _record_keras_step(self.model, np)
            except Exception as err:
                _failed("Keras step record", err)

    real = model_cls.fit

    def fit(self, *args, **kwargs):
        if len(args) > 5:  # fit(x, y, batch_size, epochs, verbose, callbacks, ...)
            args = args[:5] + (list(args[5] or []) + [DetshimSteps()],) + args[6:]
        else:
            kwargs["callbacks"] = list(kwargs.get("callbacks") or []) + [DetshimSteps()]
        return real(self, *args, **kwargs)
    model_cls.fit = _like(fit, real)
    real_batch = model_cls.train_on_batch

    def train_on_batch(self, *args, **kwargs):
        """One optimizer step outside fit, so no callback: recorded after
        it returns."""
        out = real_batch(self, *args, **kwargs)
        try:
            _record_keras_step(self, np)
        except Exception as err:
            _failed("Keras step record", err)
        return out
    model_cls.train_on_batch = _like(train_on_batch, real_batch)


# ---- JAX -------------------------------------------------------------------

class _JaxCall:
    """A jax.jit'd (or jax.pmap'd: `kind`) function, called through: after
    each call, a step record when it returned its own state, and an op
    record with ops on."""

    def __init__(self, jax, np, jitted, fun, kind="jit"):
        self._jax, self._np, self._jitted, self._fun = jax, np, jitted, fun
        self._kind = kind
        self._steps = 0
        self.__wrapped__ = fun
        for attr in ("__module__", "__name__", "__qualname__", "__doc__"):
            try:
                setattr(self, attr, getattr(fun, attr))
            except (AttributeError, TypeError):
                pass

    def __getattr__(self, name):
        return getattr(self._jitted, name)

    def __get__(self, obj, cls=None):
        if obj is None:
            return self
        import functools
        return functools.partial(self, obj)

    def __call__(self, *args, **kwargs):
        tree = self._jax.tree_util
        ins = [x for x in tree.tree_leaves((args, kwargs)) if hasattr(x, "shape")]
        if any(isinstance(x, self._jax.core.Tracer) for x in ins):
            return self._jitted(*args, **kwargs)  # called while tracing another function
        # Before the call: donated arguments are gone after it.
        wanted = self._signatures(args) if _STEPS else None
        op = False
        if _OPS:
            try:
                site = _site((_HERE + os.sep, os.path.dirname(self._jax.__file__) + os.sep))
                op = _begin("op", [("op", "%s(%s)" % (self._kind, self.__name__)), ("site", site)])
                for i, x in enumerate(ins[:_MAX_OP_INPUTS] if op else ()):
                    _put_array("in%d" % i, ROLE_IN, x, self._np)
            except Exception as err:
                _failed("JAX op record", err)
                op = False
        out = self._jitted(*args, **kwargs)
        try:
            self._record(wanted, out, op, len(ins))
        except Exception as err:
            _failed("JAX step or op record", err)
        return out

    def _record(self, wanted, out, op, nins):
        """The op record begun before the call, then the step record."""
        tree = self._jax.tree_util
        if op:
            outs = tree.tree_leaves(out)
            for i, x in enumerate(outs[:_op_room(nins)]):
                _put_array("out%d" % i, ROLE_OUT, x, self._np)
            _end_op(nins, len(outs))
        carried = self._carried(wanted, out) if wanted else ()
        if carried:
            self._steps += 1
            if _begin("step", [("framework", "jax"), ("function", self.__name__),
                               ("step", self._steps)]):
                _put_arrays([(label + tree.keystr(path), leaf) for label, value in carried
                             for path, leaf in tree.tree_flatten_with_path(value)[0]], self._np)
                _shim.end()

    def _signature(self, x):
        """A pytree's structure, leaf shapes and dtypes; None for one of
        fewer than two leaves or one with leaves that are not arrays."""
        leaves, treedef = self._jax.tree_util.tree_flatten(x)
        if len(leaves) < 2 or not all(hasattr(v, "shape") for v in leaves):
            return None
        return treedef, tuple((v.shape, str(v.dtype)) for v in leaves)

    def _signatures(self, args):
        """Signature -> the names of the positional arguments that have it,
        in order."""
        try:
            import inspect
            names = list(inspect.signature(self._fun).parameters)
        except (TypeError, ValueError):
            names = []
        wanted = {}
        for i, a in enumerate(args):
            s = self._signature(a)
            if s is not None:
                wanted.setdefault(s, []).append(names[i] if i < len(names) else "arg%d" % i)
        return wanted

    def _carried(self, wanted, out):
        """(argument name, output) for each output with an argument's
        signature: the state a training step carries. Arguments of one
        signature name its outputs in order: (params, m, v) in, (params,
        m, v) out."""
        found = []
        for o in out if isinstance(out, tuple) else (out,):
            s = self._signature(o)
            if s is not None and wanted.get(s):
                label = wanted[s].pop(0) if len(wanted[s]) > 1 else wanted[s][0]
                found.append((label, o))
        return found


def _library_code(fun):
    """True for a function of an installed package (optax's, Keras's own
    train function): only the program's own jitted functions are steps."""
    name = getattr(getattr(fun, "__code__", None), "co_filename", "")
    return "site-packages" in name or "dist-packages" in name


def _hook_jax(jax):
    if not _reach_shim():
        return
    import numpy as np
    for kind in ("jit", "pmap"):
        real = getattr(jax, kind, None)
        if real is not None:
            setattr(jax, kind, _jax_transform(jax, np, real, kind))


def _jax_transform(jax, np, real, kind):
    """jax.jit or jax.pmap, giving the program's own functions a _JaxCall
    (the decorator form too: jax.jit(static_argnums=...) returns one)."""
    def transform(fun=None, *args, **kwargs):
        if fun is None:
            return lambda f: transform(f, *args, **kwargs)
        if _library_code(fun):
            return real(fun, *args, **kwargs)
        return _JaxCall(jax, np, real(fun, *args, **kwargs), fun, kind)
    return _like(transform, real)


def _like(wrapper, real):
    """wrapper, looking like real (its name and doc, real as __wrapped__)."""
    wrapper.__wrapped__ = real
    wrapper.__doc__ = real.__doc__
    wrapper.__name__ = getattr(real, "__name__", wrapper.__name__)
    return wrapper


_HOOKS = {"torch": _hook_torch, "keras": _hook_keras, "jax": _hook_jax}
_done = set()


def hook(name, module):
    """Called by sitecustomize.py right after `name` (torch, keras, jax)
    is imported, in a process with a shim and a trace whose policy asked
    for steps or ops; once per framework."""
    if name in _HOOKS and name not in _done:
        _done.add(name)
        _HOOKS[name](module)
