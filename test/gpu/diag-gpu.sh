#!/usr/bin/env bash
# diag-gpu.sh - resource diagnostics on a real GPU: the recorder benchmark
# (cost at 100 ms, time of one GPU sample), then `kscope monitor` around a
# torch program that idles, allocates 8 GiB and runs a long matmul
# (diag-load.py); diag-check.py reads the JSONL back: utilization above 90%
# during the matmul, memory used rising with the allocation, clocks, power,
# temperature and throttle reasons decoded. Run by tools/gpu-run.sh.
#
# Env: KSCOPE_SOURCE_DIR (repo), KSCOPE_BINARY_DIR (build with kscope,
#      libkscope.so, bench_recorder), KSCOPE_GPU_WORK (scratch; outputs land
#      in $KSCOPE_GPU_WORK/diag)
set -uo pipefail
src=${KSCOPE_SOURCE_DIR:?}
bin=${KSCOPE_BINARY_DIR:?}
source "$src/test/gpu/gpu-lib.bash"
gpu_work diag-gpu diag

echo "== bench_recorder"
"$bin/bench_recorder" 5 || status=1

echo "== kscope monitor -- diag-load.py"
"$bin/kscope" monitor --interval 50 -o "$work/load.jsonl" -- \
    python3 "$src/test/gpu/diag-load.py" "$bin/libkscope.so"
rc=$?
if [ "$rc" -eq 0 ]; then echo "PASS  monitor -- COMMAND: the load ran and exited 0"; else
    echo "FAIL  monitor -- COMMAND: exit $rc"
    status=1
fi
python3 "$src/test/gpu/diag-check.py" "$work/load.jsonl" || status=1

echo "== kscope monitor CSV, GPUs only"
"$bin/kscope" monitor --interval 100 --duration 1 -o "$work/idle.csv" >/dev/null
python3 - "$work/idle.csv" <<'PY' || status=1
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
ok = len(rows) >= 8 and all(r["nv0_total_bytes"] and r["nv0_core_mhz"] for r in rows)
print("%s  monitor CSV on the GPU: %d rows, nv0 total %s bytes, SM %s MHz, throttle '%s'" % (
    "PASS" if ok else "FAIL", len(rows), rows[0]["nv0_total_bytes"] if rows else "-",
    rows[0]["nv0_core_mhz"] if rows else "-", rows[0]["nv0_throttle_reasons"] if rows else "-"))
sys.exit(0 if ok else 1)
PY
exit $status
