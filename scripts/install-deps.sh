#!/bin/sh
# Installs what detshim's build, tests and demo need and are missing:
# Debian packages (apt-get, --no-install-recommends) and, for the tests that
# use what most users run, PyPI wheels in a venv under build/venv.
# Idempotent and quiet when everything is present. Run by `make test`,
# `make demo` and `make bench`; safe to run by hand.
set -eu

# openssh-client: test-security shows ssh-keygen's keys stay real under the
# shim (a JDK for its Java check is left to the machine: about 200 MB).
# libzstd1: compressed traces ([trace] compress = zstd) load it with
# dlopen; test-compress needs it (every Debian system has it: dpkg does).
# python3-dev: test_pysite checks the CPython 3.11 frame layouts the shim
# declares (shim/trace/pysite_layout.h) against CPython's own headers.
# python3-joblib: test-processes runs a joblib Parallel (scikit-learn's
# n_jobs) under the default policy.
PACKAGES="gcc libc6-dev make python3 python3-venv libssl-dev libxxhash-dev libunwind-dev
libinih-dev libcmocka-dev libopenblas-dev python3-numpy python3-torch openssh-client python3-dev libzstd1
python3-joblib"
VENV=${DETSHIM_VENV:-build/venv}
# What most users run, from PyPI: numpy 2.x, whose wheels bundle an
# OpenBLAS with prefixed, ILP64-suffixed names; TensorFlow (CPU) with
# Keras, and JAX, for the framework policies' tests. Pinned, because the
# policies' XLA_FLAGS must be flags this jaxlib knows (XLA stops at an
# unknown one). About 440 MB of downloads, 2.1 GB installed.
# scipy: its wheel bundles a second OpenBLAS, with LP64 scipy_ names.
VENV_WHEELS="numpy>=2,<3 scipy>=1.17,<2 tensorflow-cpu==2.21.0 jax[cpu]==0.10.2"
# Fast: reads the installed versions without importing anything.
VENV_CHECK='
import importlib.metadata as m, sys
want = {"tensorflow-cpu": "2.21.0", "jax": "0.10.2"}
ok = m.version("numpy").startswith("2.") and all(m.version(k) == v for k, v in want.items())
ok = ok and m.version("scipy").startswith("1.") and int(m.version("scipy").split(".")[1]) >= 17
sys.exit(0 if ok else 1)'

missing=""
for p in $PACKAGES; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
        missing="$missing $p"
done
if [ -n "$missing" ]; then
    echo "install-deps: installing Debian packages:$missing"
    SUDO=""
    if [ "$(id -u)" != 0 ]; then
        command -v sudo >/dev/null || {
            echo "install-deps: need root (or sudo) to install:$missing" >&2
            exit 2
        }
        SUDO=sudo
    fi
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $missing
fi

[ "${1:-}" = "--no-venv" ] && exit 0
if ! "$VENV/bin/python" -c "$VENV_CHECK" 2>/dev/null; then
    echo "install-deps: installing $VENV_WHEELS into $VENV from PyPI"
    [ -x "$VENV/bin/python" ] || /usr/bin/python3 -m venv "$VENV"
    "$VENV/bin/pip" install -q --disable-pip-version-check $VENV_WHEELS
fi
