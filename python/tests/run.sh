#!/usr/bin/env bash
# run.sh - build and install the kscope Python package from this checkout
# (`pip install .` at the repository root: extension and C library in one
# step, build files under build-python/), then run its tests.
# The interpreter is $PYTHON (tools/test.sh passes its venv's), else python3;
# it needs pytest and msgpack. $KSCOPE_WHEEL, when set, is a wheel's path
# to install instead of building. $KSCOPE_PY_PRELOAD, when set, is preloaded
# into the tests (not the build): the sanitizer runtime of an extension
# built with -fsanitize (tools/test.sh's sanitized pass).
#   PYTHON=build-debug/venv/bin/python bash python/tests/run.sh [pytest args]
set -euo pipefail
cd "$(dirname "$0")/../.."
PY=${PYTHON:-python3}
if [ -n "${KSCOPE_WHEEL:-}" ]; then # a binary wheel (tools/wheel.sh --test) instead
    "$PY" -m pip install -q --force-reinstall --no-deps "$KSCOPE_WHEEL"
else
    # pip says what it does as it goes (the build takes about a minute)
    echo "run.sh: building and installing the kscope package with $PY"
    "$PY" -m pip install --disable-pip-version-check --force-reinstall --no-deps .
fi
cd python/tests # import the installed package, not the source folder
# -rs: say which tests were skipped and why
${KSCOPE_PY_PRELOAD:+env LD_PRELOAD="$KSCOPE_PY_PRELOAD"} "$PY" -m pytest -q -rs "$@" .
