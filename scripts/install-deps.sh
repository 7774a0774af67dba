#!/bin/sh
# Installs what detshim's build, tests and demo need and are missing:
# Debian packages (apt-get, --no-install-recommends) and, for the tests that
# use what most users run, PyPI wheels in a venv under build/venv.
# Idempotent and quiet when everything is present. Run by `make test`,
# `make demo` and `make bench`; safe to run by hand.
set -eu

PACKAGES="gcc libc6-dev make python3 python3-venv libssl-dev libxxhash-dev libunwind-dev
libinih-dev libcmocka-dev libopenblas-dev python3-numpy python3-torch"
VENV=${DETSHIM_VENV:-build/venv}
# numpy 2.x wheels bundle an OpenBLAS with prefixed, ILP64-suffixed names.
VENV_WHEELS="numpy>=2,<3"

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

if [ "${1:-}" != "--no-venv" ] && ! "$VENV/bin/python" -c 'import numpy, sys; sys.exit(int(numpy.__version__.split(".")[0]) < 2)' 2>/dev/null; then
    echo "install-deps: creating $VENV with $VENV_WHEELS from PyPI"
    rm -rf "$VENV"
    /usr/bin/python3 -m venv "$VENV"
    "$VENV/bin/pip" install -q --disable-pip-version-check "$VENV_WHEELS"
fi
