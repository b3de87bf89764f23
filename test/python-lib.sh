# python-lib.sh - for the tests that use the Python package (sourced by
# test/gpu/python-run.sh, peer-proton.sh and the other Python GPU tests,
# and test/peer-proton-api.sh): install kscope from a copy of the
# repository's package files (setup.py, pyproject.toml, python/, with
# src/, include/ and cmake/ linked; the
# GPU machine has no registry, so build isolation is off) into a private
# folder and put it on PYTHONPATH; copy Proton's own tests to run them
# against it.
#
#   install_kscope WORK LABEL   # 0, or 1 with a "FAIL  LABEL: ..." line
#   proton_tests LABEL DEST [FILE...]   # likewise
#
# With KSCOPE_WHEEL set to a wheel's path, installs that wheel instead (no
# compiler step) and puts its `kscope` command first on PATH.
#
# Needs KSCOPE_SOURCE_DIR; KSCOPE_DEPS (default /tmp/kscope-deps) is where
# tools/gpu-run.sh unpacked the build's Debian packages; PY (default
# python3) is the interpreter.

install_kscope() {
    local work=$1 label=$2 src=${KSCOPE_SOURCE_DIR:?} deps=${KSCOPE_DEPS:-/tmp/kscope-deps}
    local py=${PY:-python3}
    if [ -n "${KSCOPE_WHEEL:-}" ]; then
        install_kscope_wheel "$work" "$label" "$py"
        return
    fi
    if [ -d "$deps/usr/include" ]; then
        export C_INCLUDE_PATH=$deps/usr/include${C_INCLUDE_PATH:+:$C_INCLUDE_PATH}
        export LIBRARY_PATH=$deps/usr/lib/x86_64-linux-gnu${LIBRARY_PATH:+:$LIBRARY_PATH}
        export LD_LIBRARY_PATH=$deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
    fi
    # Build in a copy so the repository keeps no build output.
    mkdir -p "$work/pkgsrc"
    cp "$src/setup.py" "$src/pyproject.toml" "$work/pkgsrc/"
    cp -r "$src/python" "$work/pkgsrc/python"
    rm -rf "$work/pkgsrc/python/build" "$work/pkgsrc/python/kscope/"*.so
    ln -s "$src/src" "$work/pkgsrc/src"
    ln -s "$src/include" "$work/pkgsrc/include"
    ln -s "$src/cmake" "$work/pkgsrc/cmake" # the GPU vendors' facts (cmake/cuda.cmake)
    local site=$work/site
    if ! (cd "$work/pkgsrc" && "$py" -m pip install -q --no-build-isolation --no-deps \
            --target "$site" . >"$work/build.log" 2>&1); then
        # setuptools older than 70.1 without the wheel package cannot make
        # a wheel, and a Python without setuptools cannot run setup.py:
        # build the extension in place with the C compiler alone.
        echo "$label: pip install failed (see build.log); building in place"
        if ! (cd "$work/pkgsrc" && "$py" python/kscope_setup.py >>"$work/build.log" 2>&1); then
            echo "FAIL  $label: the kscope extension did not build:"
            tail -20 "$work/build.log"
            return 1
        fi
        site=$work/pkgsrc/python
    fi
    export PYTHONPATH=$site${PYTHONPATH:+:$PYTHONPATH}
    if ! "$py" -c "import kscope" 2>"$work/import.log"; then
        echo "FAIL  $label: import kscope failed:"
        cat "$work/import.log"
        return 1
    fi
}

# The wheel alone into WORK/site: pip unpacks it, compiles nothing.
install_kscope_wheel() {
    local work=$1 label=$2 py=$3 site=$1/site
    if ! "$py" -m pip install -q --no-index --no-deps --no-compile --target "$site" \
            "$KSCOPE_WHEEL" >"$work/build.log" 2>&1; then
        echo "FAIL  $label: the wheel $KSCOPE_WHEEL did not install:"
        tail -20 "$work/build.log"
        return 1
    fi
    export PYTHONPATH=$site${PYTHONPATH:+:$PYTHONPATH}
    export PATH=$site/bin:$PATH
    if ! "$py" -c "import kscope" 2>"$work/import.log"; then
        echo "FAIL  $label: import kscope (from the wheel) failed:"
        cat "$work/import.log"
        return 1
    fi
}

# proton_tests LABEL DEST [FILE...]: Proton's own test FILEs (default: all
# of test/third_party/proton/test_*.py) copied into DEST with `import
# triton.profiler as proton` changed to `import kscope as proton` and
# nothing else, beside the conftest.py that gives them Triton's fixtures
# (test/support/proton_conftest.py). 1 with a "FAIL  LABEL: ..." line when
# a file has no such import line.
proton_tests() {
    local label=$1 dest=$2 src=${KSCOPE_SOURCE_DIR:?} f
    shift 2
    [ $# -eq 0 ] && set -- $(cd "$src/test/third_party/proton" && ls test_*.py)
    mkdir -p "$dest"
    for f in "$@"; do
        sed 's/^import triton\.profiler as proton$/import kscope as proton/' \
            "$src/test/third_party/proton/$f" >"$dest/$f"
        if ! grep -q '^import kscope as proton$' "$dest/$f"; then
            echo "FAIL  $label: $f has no 'import triton.profiler as proton' line"
            return 1
        fi
    done
    cp "$src/test/support/proton_conftest.py" "$dest/conftest.py"
}
