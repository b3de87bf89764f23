#!/usr/bin/env bash
# Build options: a plain configure does not turn warnings into errors (a
# newer compiler's new warning must not break someone's build), while
# tools/test.sh, what CI runs, asks for -Werror.
set -euo pipefail
src=${KSCOPE_SOURCE_DIR:?}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake -S "$src" -B "$tmp" -DKSCOPE_TESTS=OFF >/dev/null
grep -q '^KSCOPE_WERROR:BOOL=OFF$' "$tmp/CMakeCache.txt" ||
    { echo "KSCOPE_WERROR is not OFF by default"; exit 1; }
if grep -rq --include=flags.make -e -Werror "$tmp/CMakeFiles"; then
    echo "a default build compiles with -Werror"
    exit 1
fi
grep -q -- '-DKSCOPE_WERROR=ON' "$src/tools/test.sh" ||
    { echo "tools/test.sh does not build with -DKSCOPE_WERROR=ON"; exit 1; }
echo "build options: -Werror only when asked; tools/test.sh asks"
