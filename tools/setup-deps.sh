#!/usr/bin/env bash
# setup-deps.sh - install what kscope needs to build and test, if missing.
# Debian packages through apt (as root), Python packages through pip.
# chromium runs the HTML report's browser tests (test/browser/).
set -euo pipefail

apt_pkgs=(cmake make gcc g++ pkg-config libmsgpack-dev libyajl-dev libcmocka-dev
          openmpi-bin libopenmpi-dev chromium)
missing=()
for p in "${apt_pkgs[@]}"; do
    dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
    echo "setup-deps: installing ${missing[*]}"
    SUDO=""
    [ "$(id -u)" -eq 0 ] || SUDO="sudo"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

PY=${PYTHON:-python3}
if ! "$PY" -c "import pytest, msgpack" >/dev/null 2>&1; then
    echo "setup-deps: installing pytest msgpack for $("$PY" --version)"
    "$PY" -m pip install -q pytest msgpack
fi
