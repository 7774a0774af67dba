"""detshim's Python start-up hook. The shim puts this folder first on
PYTHONPATH of every Python program it runs, under every policy; Python's
site module then imports this file at start-up. It does two things:

Secrets stay real (docs/security.md). The shim pins the entropy a process
reads, which is what makes unseeded training reproducible; but Python's
secrets, identifiers and authentication keys come from the same
os.urandom. Around the library functions that make them -- secrets'
token_bytes/token_hex/token_urlsafe/choice/randbelow, uuid.uuid4,
multiprocessing's authkey and challenges, tempfile's random names -- this
hook asks the shim (detshim_rng_real_begin/end, through ctypes) for real
entropy, which also leaves the pinned streams where they were.
secrets.randbits stays pinned: numpy's SeedSequence draws its entropy
through it, and that is training randomness.

What the framework computes: detshim_steps.py, beside this file, records
training steps and framework ops into the trace ([trace] steps and ops).

The code it ran with: at exit, the versions of the top-level packages the
program imported go into the trace (detshim_record_python_package).

Some determinism switches are Python calls, not environment variables:

- DETSHIM_TORCH_DETERMINISTIC (on, warn_only, off): PyTorch has no
  environment switch for deterministic algorithms; right after torch's own
  import this sets torch.use_deterministic_algorithms and the cuDNN flags.
- DETSHIM_TF_SEED (a whole number): TensorFlow's TF_DETERMINISTIC_OPS makes
  every random op without a seed raise an error, and unmodified programs
  rarely seed; right after tensorflow's own import this sets its global
  seed (tf.random.set_seed), which a program's own call still replaces.

It waits for the framework to be imported, whenever and by whomever, and
otherwise stays out of the way: it never imports a framework itself, and it
runs the next sitecustomize on sys.path as if this one were not there."""
import os
import sys


class _AfterImportFinder:
    """A sys.meta_path finder that answers only for one module name (a
    framework, or a module whose secrets stay real): it asks the finders
    after it for the real spec and wraps the spec's loader, so the settings
    follow the module's own import. `during`, if given, runs the module's
    code: during(exec_module, module)."""

    def __init__(self, name, apply, during=None):
        # Marks the finder for a second copy of this file further down
        # sys.path (a build tree and an installed tree both on PYTHONPATH):
        # one is enough.
        self.detshim_hook_for = name
        self.apply = apply
        self.during = during

    def find_spec(self, name, path=None, target=None):
        if name != self.detshim_hook_for or self not in sys.meta_path:
            return None
        later = sys.meta_path[sys.meta_path.index(self) + 1:]
        for finder in later:
            find_spec = getattr(finder, "find_spec", None)
            spec = find_spec(name, path, target) if find_spec else None
            if spec is not None:
                break
        else:
            return None
        # A loader without exec_module takes Python's legacy path, which a
        # wrapper cannot follow; torch's and tensorflow's never lack it.
        if hasattr(spec.loader, "exec_module"):
            spec.loader = _AfterImportLoader(self, spec, spec.loader)
        return spec

    def loaded(self, module):
        # Staying until the framework has loaded lets a retried import,
        # after a failed one, still get the settings.
        if self in sys.meta_path:
            sys.meta_path.remove(self)
        self.apply(module)


class _AfterImportLoader:
    """Runs the framework's real loader, then the finder's settings.
    Everything but exec_module goes to the real loader."""

    def __init__(self, finder, spec, loader):
        self._finder = finder
        self._spec = spec
        self._loader = loader

    def __getattr__(self, name):
        return getattr(self._loader, name)

    def exec_module(self, module):
        # The framework's code, and every later reader of __loader__ or
        # __spec__, sees the loader it would have seen without this hook.
        self._spec.loader = self._loader
        module.__loader__ = self._loader
        # The module's own import: errors are its own.
        if self._finder.during:
            self._finder.during(self._loader.exec_module, module)
        else:
            self._loader.exec_module(module)
        self._finder.loaded(module)


def _make_deterministic(torch, warn_only):
    """Applies the settings to the freshly imported torch. A setting this
    torch cannot take is reported in one line and the program goes on."""
    version = getattr(torch, "__version__", "?")
    try:
        # warn_only came in PyTorch 1.11; leaving it out in mode on lets
        # 1.8-1.10 take that mode.
        if warn_only:
            torch.use_deterministic_algorithms(True, warn_only=True)
        else:
            torch.use_deterministic_algorithms(True)
    except Exception as err:
        call = "(True, warn_only=True)" if warn_only else "(True)"
        _complain("could not call torch.use_deterministic_algorithms%s on "
                  "PyTorch %s (%s: %s); it needs PyTorch >= %s: upgrade "
                  "PyTorch, or set DETSHIM_TORCH_DETERMINISTIC=%s"
                  % (call, version, type(err).__name__, err,
                     "1.11" if warn_only else "1.8",
                     "on" if warn_only else "off"))
    try:
        __import__("torch.backends.cudnn")
        torch.backends.cudnn.benchmark = False
        torch.backends.cudnn.deterministic = True
    except Exception as err:
        _complain("could not set torch.backends.cudnn.benchmark=False and "
                  "deterministic=True on PyTorch %s (%s: %s): cuDNN "
                  "convolutions may not be reproducible; set them in the "
                  "program" % (version, type(err).__name__, err))
    if os.environ.get("PYTORCH_TUNABLEOP_ENABLED") == "0":
        _keep_tunableop_off(torch)


def _keep_tunableop_off(torch):
    """The policy turns TunableOp off (PYTORCH_TUNABLEOP_ENABLED = 0: the
    GEMM kernels it times and keeps differ run to run); the program's own
    torch.cuda.tunable.enable(True) (PyTorch >= 2.3) would turn it back on
    past the environment, so it leaves TunableOp off and says so once.
    torch.cuda.tunable.enable calls torch._C._cuda_tunableop_enable, which
    a program may also call itself: both are kept off."""
    said = []

    def keep_off(real, name):
        def wrapper(val=True):
            if val and not said:
                said.append(1)
                _complain("%s(True) was ignored: the policy keeps TunableOp "
                          "off (PYTORCH_TUNABLEOP_ENABLED = 0), since the "
                          "kernels it times and picks differ run to run; "
                          "remove the call, or use a policy without that "
                          "line" % name)
            return real(False)
        wrapper.__doc__ = real.__doc__
        return wrapper

    c = getattr(torch, "_C", None)
    raw = getattr(c, "_cuda_tunableop_enable", None)
    if raw is not None:
        c._cuda_tunableop_enable = keep_off(raw, "torch._C._cuda_tunableop_enable")
    tunable = getattr(getattr(torch, "cuda", None), "tunable", None)
    enable = getattr(tunable, "enable", None)
    if enable is not None:
        tunable.enable = keep_off(enable, "torch.cuda.tunable.enable")


def _complain(message):
    sys.stderr.write("detshim: %s\n" % message)


def _seed_tensorflow(tf, seed):
    """Sets TensorFlow's global seed, so its random ops have one under
    TF_DETERMINISTIC_OPS. A failure is reported in one line."""
    try:
        tf.random.set_seed(seed)
    except Exception as err:
        _complain("could not call tf.random.set_seed(%d) on TensorFlow %s "
                  "(%s: %s): unseeded random ops will raise under "
                  "TF_DETERMINISTIC_OPS; seed them in the program"
                  % (seed, getattr(tf, "__version__", "?"),
                     type(err).__name__, err))


def _hooked(name):
    return any(getattr(f, "detshim_hook_for", None) == name for f in sys.meta_path)


_shim_calls = None


def _shim_real_calls():
    """The shim's (begin, end) pair for real entropy, looked up once;
    (None, None) where this process has no shim to ask."""
    global _shim_calls
    if _shim_calls is None:
        try:
            import ctypes
            lib = ctypes.CDLL(None)
            _shim_calls = (lib.detshim_rng_real_begin, lib.detshim_rng_real_end)
        except (ImportError, OSError, AttributeError) as err:
            _shim_calls = (None, None)
            if "libdetshim" in os.environ.get("LD_PRELOAD", ""):
                _complain("cannot reach the shim from Python (%s: %s): secrets, "
                          "uuid4 and multiprocessing keys would be pinned; the "
                          "program stops here" % (type(err).__name__, err))
                os._exit(2)
    return _shim_calls


class _RealEntropy:
    """Within it, this thread's entropy reads are real (not pinned)."""

    def __enter__(self):
        begin = _shim_real_calls()[0]
        if begin is not None:
            begin()
        return self

    def __exit__(self, *exc):
        end = _shim_real_calls()[1]
        if end is not None:
            end()
        return False


def _real(fn):
    """fn, running on real entropy."""
    def wrapper(*args, **kwargs):
        with _RealEntropy():
            return fn(*args, **kwargs)
    for attr in ("__module__", "__name__", "__qualname__", "__doc__"):
        setattr(wrapper, attr, getattr(fn, attr, None))
    wrapper.__wrapped__ = fn
    wrapper.detshim_real = True
    return wrapper


def _patch(owner, names):
    for name in names:
        fn = getattr(owner, name, None)
        if fn is not None and not getattr(fn, "detshim_real", False):
            setattr(owner, name, _real(fn))


def _patch_tempfile(tempfile):
    # The name sequence seeds its own Random from entropy on first use
    # per process: that seeding, and so every name, is real.
    seq = getattr(tempfile, "_RandomNameSequence", None)
    if seq is not None:
        _patch(seq, ["__next__"])


def _exec_with_real_urandom(exec_module, module):
    """Runs a module's code with os.urandom real: multiprocessing.process
    draws the process's authkey at import."""
    pinned = os.urandom
    os.urandom = _real(pinned)
    try:
        exec_module(module)
    finally:
        os.urandom = pinned


# Module name -> (what to do once it is imported, what to run its code with).
_SECRET_MAKERS = {
    "secrets": (lambda m: _patch(m, ["token_bytes", "token_hex", "token_urlsafe",
                                     "choice", "randbelow"]), None),
    "uuid": (lambda m: _patch(m, ["uuid4"]), None),
    "tempfile": (_patch_tempfile, None),
    "multiprocessing.process": (lambda m: None, _exec_with_real_urandom),
    "multiprocessing.connection": (lambda m: _patch(m, ["deliver_challenge",
                                                        "answer_challenge"]), None),
    "multiprocessing.forkserver": (lambda m: _patch(m.ForkServer, ["ensure_running"])
                                   if hasattr(m, "ForkServer") else None, None),
}


def _keep_secrets_real():
    for name, (apply, during) in _SECRET_MAKERS.items():
        if _hooked(name):
            continue
        module = sys.modules.get(name)
        if module is not None:
            if during is not None and name == "multiprocessing.process":
                # Imported before this hook (a .pth file): its authkey was
                # drawn pinned, so draw a real one now.
                with _RealEntropy():
                    module.current_process().authkey = os.urandom(32)
            apply(module)
        else:
            sys.meta_path.insert(0, _AfterImportFinder(name, apply, during))


def _install_hooks():
    mode = os.environ.get("DETSHIM_TORCH_DETERMINISTIC", "off")
    if mode not in ("", "off", "on", "warn_only"):
        _complain("DETSHIM_TORCH_DETERMINISTIC=%s is not one of on, "
                  "warn_only, off: PyTorch left as it is; fix or unset it"
                  % mode)
    elif mode in ("on", "warn_only") and not _hooked("torch"):
        warn_only = mode == "warn_only"
        sys.meta_path.insert(0, _AfterImportFinder(
            "torch", lambda torch: _make_deterministic(torch, warn_only)))
    seed = os.environ.get("DETSHIM_TF_SEED", "")
    if seed and not seed.isdigit():
        _complain("DETSHIM_TF_SEED=%s is not a whole number: TensorFlow "
                  "left unseeded; fix or unset it" % seed)
    elif seed and not _hooked("tensorflow"):
        value = int(seed) % 2**63
        sys.meta_path.insert(0, _AfterImportFinder(
            "tensorflow", lambda tf: _seed_tensorflow(tf, value)))


def _run_next_sitecustomize():
    """Imports the sitecustomize that Python would have found without this
    folder (Debian's, a user's), leaving it in sys.modules as Python would,
    and reports its failure the way site.py does."""
    here = os.path.dirname(os.path.abspath(__file__))
    ours = [p for p in sys.path
            if isinstance(p, str) and os.path.abspath(p) == here]
    if not ours:
        return  # reached some other way: importing again would find us again
    # A None finder in sys.path_importer_cache makes the path finder skip
    # that entry, which hides this folder without touching sys.path.
    saved = {p: sys.path_importer_cache.get(p) for p in ours}
    for p in ours:
        sys.path_importer_cache[p] = None
    this = sys.modules.pop("sitecustomize", None)
    try:
        import sitecustomize  # noqa: F401 (imported for its side effects)
    except Exception as err:
        # site.py would have reported it; when nothing replaced us, we stay
        # in sys.modules, where site.py's own import expects a module.
        if this is not None:
            sys.modules["sitecustomize"] = this
        if not (isinstance(err, ImportError) and err.name == "sitecustomize"):
            if sys.flags.verbose:
                sys.excepthook(*sys.exc_info())
            else:
                sys.stderr.write("Error in sitecustomize; set PYTHONVERBOSE "
                                 "for traceback:\n%s: %s\n"
                                 % (err.__class__.__name__, err))
    finally:
        for p, finder in saved.items():
            if finder is None:
                sys.path_importer_cache.pop(p, None)
            else:
                sys.path_importer_cache[p] = finder


def _record_packages():
    """At exit: the version of every top-level package the program
    imported (its __version__), and the interpreter's, into the trace, so
    the root binds the framework versions (docs/verify.md). The standard
    library is the interpreter's version."""
    try:
        import ctypes
        record = ctypes.CDLL(None).detshim_record_python_package
    except (ImportError, OSError, AttributeError):
        return  # no shim in this process: nothing to record into
    record.argtypes = (ctypes.c_char_p, ctypes.c_char_p)
    stdlib = getattr(sys, "stdlib_module_names", ())
    found = {"python": "%d.%d.%d" % sys.version_info[:3]}
    for name, module in list(sys.modules.items()):
        if "." in name or name.startswith("_") or name in stdlib or module is None:
            continue
        version = getattr(module, "__version__", None)
        if isinstance(version, str) and version:
            found[name] = version
    for name in sorted(found):
        record(name.encode("utf-8", "replace"), found[name].encode("utf-8", "replace"))


def _register_package_record():
    if "libdetshim" in os.environ.get("LD_PRELOAD", "") and os.environ.get("DETSHIM_TRACE"):
        import atexit
        atexit.register(_record_packages)


def _after_import(name, apply):
    """apply(module) once `name` is imported (now, if it already is)."""
    if sys.modules.get(name) is not None:
        apply(sys.modules[name])
    else:
        sys.meta_path.insert(0, _AfterImportFinder(name, apply))


def _record_framework_work():
    """Step and op records ([trace] steps, ops: detshim_steps.py beside
    this file, docs/frameworks.md), loaded only once a framework is."""
    wanted = "on" in (os.environ.get("DETSHIM_TRACE_STEPS"), os.environ.get("DETSHIM_TRACE_OPS"))
    if wanted and "libdetshim" in os.environ.get("LD_PRELOAD", "") and os.environ.get("DETSHIM_TRACE"):
        for name in ("torch", "keras", "jax"):
            _after_import(name, lambda module, name=name: __import__("detshim_steps").hook(name, module))


_keep_secrets_real()
_register_package_record()
_install_hooks()
_record_framework_work()
if os.environ.get("DETSHIM_TRACE"):  # torch.distributed records (detshim_dist.py)
    __import__("detshim_dist").install(_AfterImportFinder)
_run_next_sitecustomize()
