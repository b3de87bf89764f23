#!/usr/bin/env bash
# device-deps.sh - fetch the Debian packages the GPU machine lacks.
#
# The GPU machine (tools/gpu-run.sh) has CUDA, CMake and ninja but no
# package registry and none of msgpack-c, yajl or cmocka. Run this here,
# where apt works: it downloads their .deb files (runtime and development
# packages) into .deps/ at the repository root (git-ignored), which the
# device call carries along and tools/gpu-run.sh unpacks into a prefix
# under /tmp with `dpkg -x` (never into /).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
packages=(libmsgpackc2 libmsgpack-dev libyajl2 libyajl-dev libcmocka0 libcmocka-dev
          pkgconf-bin libpkgconf3) # pkgconf: in case the machine has no pkg-config
mkdir -p "$root/.deps"
cd "$root/.deps"
rm -f ./*.deb
apt-get download "${packages[@]}"
ls -l ./*.deb
