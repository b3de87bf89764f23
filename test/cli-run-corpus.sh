# cli-run-corpus.sh - real programs give the same results under `kscope
# run` as bare: shell descriptors across subshells, asyncio, multiprocessing,
# make (test/faithful/corpus.py; a Python package's own test suite is
# cli-run-corpus-pytest.sh).
source "${KSCOPE_SOURCE_DIR:?}/test/run-lib.sh" || exit 1
export KS PYTHON
"$PY" -B "$KSCOPE_SOURCE_DIR/test/faithful/corpus.py"
