#!/usr/bin/env bash
# setup-deps.sh - install what kscope needs to build and test, if missing:
# Debian packages through apt (as root). The Python packages the tests need
# go into a virtual environment (tools/test.sh makes it), hence python3-venv.
# chromium runs the HTML report's browser tests (test/browser/).
# librocm-smi-dev: ROCm SMI's header, against which src/diag/rocm-smi.c
# checks its own declarations (the build does not need it; the library is
# loaded at run time, and only where the amdgpu driver is).
# KSCOPE_EXTRA_DEPS names more packages (.ci/run adds firefox-esr).
set -euo pipefail

apt_pkgs=(cmake make gcc g++ pkg-config libmsgpack-dev libyajl-dev libcmocka-dev
          openmpi-bin libopenmpi-dev python3 python3-venv chromium librocm-smi-dev
          ${KSCOPE_EXTRA_DEPS:-})
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
