#!/usr/bin/env bash
# peer-venv.sh - a virtual environment holding the peers kscope is checked
# against: Triton (its Proton, `proton`, `proton-viewer`), LLNL Hatchet,
# pytest and msgpack, plus the kscope package of this checkout. Made once
# under build-peer/ (git-ignored; about 1 GB, 40 s to fill) and reused by
# later runs; prints the environment's python on its last line.
#
#   py=$(bash tools/peer-venv.sh | tail -1)
#   bash tools/peer-venv.sh --no-kscope   # the peers only (CI: the
#       proton-viewer test, python/tests/test_peer_viewer.py, brings its own)
#
# Env: KSCOPE_PEER_VENV (default build-peer/venv), TRITON_VERSION (3.6.0,
# the version on the GPU machine).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
venv=${KSCOPE_PEER_VENV:-$root/build-peer/venv}
triton=${TRITON_VERSION:-3.6.0}
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c "import triton, hatchet, pytest, msgpack, wheel" 2>/dev/null; then
    dpkg -s python3-venv >/dev/null 2>&1 || {
        apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv >/dev/null
    }
    rm -rf "$venv"
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q --disable-pip-version-check "triton==$triton" llnl-hatchet pytest msgpack wheel \
        setuptools >&2
fi
# this checkout's kscope, rebuilt every time (it is what is tested)
[ "${1:-}" = --no-kscope ] || "$venv/bin/pip" install -q --disable-pip-version-check --no-build-isolation --force-reinstall \
    --no-deps "$root" >&2
echo "$venv/bin/python"
