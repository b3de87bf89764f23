# cli-run-corpus-pytest.sh - a pure-Python package's own test suite (toolz,
# downloaded once as a source distribution into the build folder) and
# pytest's Ctrl-C give the same results under `kscope run` as bare
# (test/faithful/corpus_pytest.py). Needs the test venv with pytest
# (KSCOPE_VENV, else <build>/venv, made by tools/test.sh) and, the first
# time, the network through pip: skipped with the reason otherwise.
source "${KSCOPE_SOURCE_DIR:?}/test/run-lib.sh" || exit 1
venv=${KSCOPE_VENV:-$KSCOPE_BINARY_DIR/venv}
VPY=$venv/bin/python
if ! [ -x "$VPY" ] || ! "$VPY" -c "import pytest" 2>/dev/null; then
    echo "skip: no venv with pytest at $venv (tools/test.sh makes it; or set KSCOPE_VENV)"
    exit 77
fi
cache=$KSCOPE_BINARY_DIR/corpus-cache
SDIST=$cache/toolz-0.12.1.tar.gz
if ! [ -f "$SDIST" ]; then
    mkdir -p "$cache"
    if ! "$VPY" -m pip download -q --no-deps --no-binary :all: toolz==0.12.1 -d "$cache" \
        >"$WORK/pip.log" 2>&1 || ! [ -f "$SDIST" ]; then
        echo "skip: cannot download toolz 0.12.1's source with pip: $(tail -1 "$WORK/pip.log")"
        exit 77
    fi
fi
export KS VPY SDIST
"$PY" -B "$KSCOPE_SOURCE_DIR/test/faithful/corpus_pytest.py"
