#!/usr/bin/env bash
# The install rules and the pkg-config file: install into a fresh prefix,
# build the bundled example against it with pkg-config (shared and static),
# and run both.
set -euo pipefail
src=${KSCOPE_SOURCE_DIR:?}
bin=${KSCOPE_BINARY_DIR:?}
prefix=$(mktemp -d)
trap 'rm -rf "$prefix"' EXIT
cmake --install "$bin" --prefix "$prefix" >/dev/null
for f in include/kscope.h bin/kscope; do
    [ -e "$prefix/$f" ] || { echo "not installed: $f"; exit 1; }
done
pcdir=$(dirname "$(find "$prefix" -name kscope.pc | head -1)")
libdir=$(dirname "$pcdir")
[ -e "$libdir/libkscope.a" ] && ls "$libdir"/libkscope.so* >/dev/null
export PKG_CONFIG_PATH=$pcdir
# the .pc file names the prefix it was configured with: point it here
sed -i "s|^prefix=.*|prefix=$prefix|" "$pcdir/kscope.pc"
# A sanitizer build's library needs its programs built the same way.
san=()
# grep reads all of ldd's output: with pipefail, grep -q quitting early
# would fail the pipeline on ldd's SIGPIPE.
if ldd "$libdir"/libkscope.so 2>/dev/null | grep libasan >/dev/null; then
    san=(-fsanitize=address,undefined)
fi
cc "${san[@]}" -o "$prefix/ex-shared" "$src/examples/example.c" $(pkg-config --cflags --libs kscope) -lm
cc "${san[@]}" -o "$prefix/ex-static" "$src/examples/example.c" $(pkg-config --cflags kscope) \
    "$libdir/libkscope.a" \
    $(pkg-config --static --libs kscope | sed 's/-lkscope//') -lm
cd "$prefix"
export KSCOPE_QUIET=1 # no GPU here is fine: host scopes are what is checked
LD_LIBRARY_PATH=$libdir ./ex-shared shared >/dev/null
./ex-static static >/dev/null
for f in shared.hatchet static.hatchet; do
    python3 -c "import json,sys; d=json.load(open('$f')); assert d[0]['children'][0]['frame']['name']=='train'"
done
"$prefix/bin/kscope" version
# A build that found CUPTI's headers says so.
if grep -q '^KSCOPE_CUDA:BOOL=ON' "$bin/CMakeCache.txt" &&
    grep -q '^KSCOPE_CUPTI_INCLUDE:PATH=/' "$bin/CMakeCache.txt"; then
    "$prefix/bin/kscope" version | grep 'gpu backend: cupti' >/dev/null ||
        { echo "version does not name the CUPTI backend of this build"; exit 1; }
fi
echo "install: headers, libraries, kscope.pc and the tool work from $prefix"
