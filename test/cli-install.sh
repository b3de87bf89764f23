#!/usr/bin/env bash
# The install rules: install into a fresh prefix (the C API and the device
# header), then, with no LD_LIBRARY_PATH anywhere, build the bundled example against it with
# pkg-config (shared and static) and with a CMake project's
# find_package(kscope) (kscope::kscope and kscope::kscope_static), run them,
# and run the installed kscope (version, kscope run, view). The prefix is
# then moved, and pkg-config must follow it.
set -euo pipefail
src=${KSCOPE_SOURCE_DIR:?}
bin=${KSCOPE_BINARY_DIR:?}
PY=${KSCOPE_PYTHON:-python3} # CTest gives the tests' venv
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix
cmake --install "$bin" --prefix "$prefix" >/dev/null
for f in include/kscope.h include/kscope/device.h bin/kscope; do
    [ -e "$prefix/$f" ] || { echo "not installed: $f"; exit 1; }
done
pcdir=$(dirname "$(find "$prefix" -name kscope.pc | head -1)")
libdir=$(dirname "$pcdir")
[ -e "$libdir/libkscope.a" ] && ls "$libdir"/libkscope.so* >/dev/null
[ -e "$libdir/cmake/kscope/kscopeConfig.cmake" ] || { echo "no kscopeConfig.cmake"; exit 1; }
# No loader path to kscope's own build or install: whatever is left points
# at third-party libraries kept outside the system folders (the GPU
# machine unpacks yajl into a private prefix), which kscope does not ship.
keep=
IFS=: read -ra dirs <<<"${LD_LIBRARY_PATH:-}"
for d in "${dirs[@]}"; do
    [ -n "$d" ] && [ ! -e "$d/libkscope.so" ] && keep=${keep:+$keep:}$d
done
if [ -n "$keep" ]; then export LD_LIBRARY_PATH=$keep; else unset LD_LIBRARY_PATH; fi
export KSCOPE_QUIET=1 # no GPU here is fine: host scopes are what is checked

# check_tree FILE: the example's tree has its `train` scope.
check_tree() {
    "$PY" -c "import json,sys; d=json.load(open('$1')); assert d[0]['children'][0]['frame']['name']=='train'"
}

# A sanitizer build's library needs its programs built the same way, and
# the sanitizer runtime first in a process it is preloaded into.
san=()
ks=("$prefix/bin/kscope")
# grep reads all of ldd's output: with pipefail, grep -q quitting early
# would fail the pipeline on ldd's SIGPIPE.
if ldd "$libdir"/libkscope.so 2>/dev/null | grep libasan >/dev/null; then
    san=(-fsanitize=address,undefined)
    export ASAN_OPTIONS=detect_leaks=0:verify_asan_link_order=0
    ks=(env LD_PRELOAD="$(cc -print-file-name=libasan.so)" "$prefix/bin/kscope")
fi

pkg_config_builds() {
    local pc_libdir
    pc_libdir=$(pkg-config --variable=libdir kscope)
    [ "$(cd "$pc_libdir" && pwd -P)" = "$(cd "$libdir" && pwd -P)" ] ||
        { echo "kscope.pc names libdir $pc_libdir, not $libdir"; exit 1; }
    cc "${san[@]}" -o "$tmp/ex-shared" "$src/examples/example.c" $(pkg-config --cflags --libs kscope) \
        -Wl,-rpath,"$pc_libdir" -lm
    cc "${san[@]}" -o "$tmp/ex-static" "$src/examples/example.c" $(pkg-config --cflags kscope) \
        -Wl,-Bstatic $(pkg-config --libs-only-l kscope) -Wl,-Bdynamic \
        $(pkg-config --static --libs-only-L kscope) $(pkg-config --static --libs kscope | sed 's/-lkscope//') -lm
    if ldd "$tmp/ex-static" | grep libkscope >/dev/null; then
        echo "ex-static loads libkscope.so"
        exit 1
    fi
    (cd "$tmp" && ./ex-shared shared >/dev/null && ./ex-static static >/dev/null)
    check_tree "$tmp/shared.hatchet"
    check_tree "$tmp/static.hatchet"
    rm -f "$tmp"/ex-* "$tmp"/*.hatchet
}

export PKG_CONFIG_PATH=$pcdir
pkg_config_builds
echo "install: pkg-config builds (shared, static) run from $prefix"

# find_package(kscope) in a project of its own.
proj=$tmp/proj
mkdir -p "$proj"
cp "$src/examples/example.c" "$proj/"
cat >"$proj/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.18)
project(uses_kscope C)
find_package(kscope 0.1 REQUIRED)
add_executable(ex_shared example.c)
target_link_libraries(ex_shared PRIVATE kscope::kscope m)
add_executable(ex_static example.c)
target_link_libraries(ex_static PRIVATE kscope::kscope_static m)
CM
cflags=${san[*]:-}
cmake -S "$proj" -B "$proj/build" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_C_FLAGS="$cflags" \
    -DCMAKE_EXE_LINKER_FLAGS="$cflags" >/dev/null
cmake --build "$proj/build" >/dev/null
(cd "$tmp" && "$proj/build/ex_shared" cm-shared >/dev/null && "$proj/build/ex_static" cm-static >/dev/null)
check_tree "$tmp/cm-shared.hatchet"
check_tree "$tmp/cm-static.hatchet"
echo "install: find_package(kscope) builds (kscope::kscope, kscope::kscope_static) run"

# The installed tool: its libraries found from where it lies.
"${ks[@]}" version >/dev/null
(cd "$tmp" && "${ks[@]}" run -o "$tmp/run" -n ex -- "$proj/build/ex_shared" self >/dev/null 2>&1)
"${ks[@]}" view "$tmp/run/ex.hatchet" | grep -q train ||
    { echo "installed kscope run recorded no train scope"; exit 1; }
# A build that found CUPTI's headers says so.
if grep -q '^KSCOPE_CUDA:BOOL=ON' "$bin/CMakeCache.txt" &&
    grep -q '^KSCOPE_CUPTI_INCLUDE:PATH=/' "$bin/CMakeCache.txt"; then
    "${ks[@]}" version | grep 'gpu backend: cupti' >/dev/null ||
        { echo "version does not name the CUPTI backend of this build"; exit 1; }
fi
echo "install: the installed kscope runs, and kscope run finds its libkscope.so"

# Moved elsewhere, the tree still works through pkg-config.
mv "$prefix" "$tmp/moved"
prefix=$tmp/moved
pcdir=${pcdir/\/prefix\//\/moved\/}
libdir=${libdir/\/prefix\//\/moved\/}
export PKG_CONFIG_PATH=$pcdir
pkg_config_builds
"$prefix/bin/kscope" version >/dev/null
echo "install: headers, libraries, kscope.pc, the CMake package and the tool work from any prefix"
