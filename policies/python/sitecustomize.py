"""detshim's Python start-up hook. PyTorch has no environment switch for
deterministic algorithms, so when a policy asks for them the shim puts this
folder first on PYTHONPATH and sets DETSHIM_TORCH_DETERMINISTIC to on,
warn_only or off; Python's site module then imports this file at start-up.
It waits for torch to be imported, whenever and by whomever, sets
torch.use_deterministic_algorithms and the cuDNN flags right after torch's
own import, and otherwise stays out of the way: it never imports torch, and
it runs the next sitecustomize on sys.path as if this one were not there."""
import os
import sys


class _TorchFinder:
    """A sys.meta_path finder that answers only for the top-level name
    'torch': it asks the finders after it for torch's real spec and wraps
    the spec's loader, so the settings follow torch's own import."""

    # Marks the finder for a second copy of this file further down sys.path
    # (a build tree and an installed tree both on PYTHONPATH): one is enough.
    detshim_torch_hook = True

    def __init__(self, warn_only):
        self.warn_only = warn_only

    def find_spec(self, name, path=None, target=None):
        if name != "torch" or self not in sys.meta_path:
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
        # wrapper cannot follow; torch's never lacks it.
        if hasattr(spec.loader, "exec_module"):
            spec.loader = _AfterTorchLoader(self, spec, spec.loader)
        return spec

    def torch_loaded(self, torch):
        # Staying until torch has loaded lets a retried import, after a
        # failed one, still get the settings.
        if self in sys.meta_path:
            sys.meta_path.remove(self)
        _make_deterministic(torch, self.warn_only)


class _AfterTorchLoader:
    """Runs torch's real loader, then the finder's settings. Everything
    but exec_module goes to the real loader."""

    def __init__(self, finder, spec, loader):
        self._finder = finder
        self._spec = spec
        self._loader = loader

    def __getattr__(self, name):
        return getattr(self._loader, name)

    def exec_module(self, module):
        # Torch's code, and every later reader of __loader__ or __spec__,
        # sees the loader it would have seen without this hook.
        self._spec.loader = self._loader
        module.__loader__ = self._loader
        self._loader.exec_module(module)  # torch's own import: errors are torch's
        self._finder.torch_loaded(module)


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


def _complain(message):
    sys.stderr.write("detshim: %s\n" % message)


def _install_torch_hook():
    mode = os.environ.get("DETSHIM_TORCH_DETERMINISTIC", "off")
    if mode in ("", "off"):
        return
    if mode not in ("on", "warn_only"):
        _complain("DETSHIM_TORCH_DETERMINISTIC=%s is not one of on, "
                  "warn_only, off: PyTorch left as it is; fix or unset it"
                  % mode)
        return
    if any(getattr(f, "detshim_torch_hook", False) for f in sys.meta_path):
        return
    sys.meta_path.insert(0, _TorchFinder(mode == "warn_only"))


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


_install_torch_hook()
_run_next_sitecustomize()
