#!/usr/bin/env bash
# cli-monitor-amd.sh - `kscope monitor` on AMD GPUs through the stand-in
# ROCm SMI (test/fake-rocm-smi.c), alone and after NVIDIA's stand-in NVML:
# the JSONL fields (MAX's names: amd0, amd1), the CSV columns, the table,
# the GPU memory of a followed process, and the help naming both libraries.
# The stand-in checks every call kscope makes; it runs inside kscope's
# process here, so the calls are checked by test-diag-amd.
source "${KSCOPE_SOURCE_DIR:?}/test/monitor-lib.sh" || exit 1

check_py() {
    local what=$1 script=$2
    shift 2
    if msg=$(python3 -c "$script" "$@" 2>&1); then ok "$what${msg:+: $msg}"; else fail "$what: $msg"; fi
}

"$KS" help monitor | tr '\n' ' ' | grep -q "through NVML or ROCm SMI" &&
    ok "help: both libraries" || fail "help does not name ROCm SMI: $("$KS" help monitor)"

export KSCOPE_ROCM_SMI_LIBRARY=$KSCOPE_BINARY_DIR/test/libkscope_fake_rocm_smi.so
start_idle
idle=$!
expect_rc 0 "monitor AMD GPUs into JSONL" "$KS" monitor --interval 50 --duration 0.3 \
    -o "$WORK/amd.jsonl"
[ -s "$WORK/err" ] && fail "messages with an AMD GPU there: $(cat "$WORK/err")" ||
    ok "no message: a vendor with GPUs is enough"
check_py "AMD JSONL fields" '
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
assert len(recs) >= 1
for r in recs:
    assert sorted(r["gpus"]) == ["amd0", "amd1"], sorted(r["gpus"])
    g0, g1 = r["gpus"]["amd0"], r["gpus"]["amd1"]
    assert g0["utilization"] == {"gpu_usage_percent": 88, "memory_activity_percent": 23}
    assert g0["memory"]["total_bytes"] == 192 << 30 and g0["memory"]["used_bytes"] == 40 << 30
    assert g0["memory"]["free_bytes"] == 152 << 30 and g0["memory"]["reserved_bytes"] is None
    assert g0["clocks"]["core_mhz"] == 1200 and g0["clocks"]["core_max_mhz"] == 2100
    assert g0["clocks"]["mem_mhz"] == 1300 and g0["clocks"]["mem_max_mhz"] == 1300
    assert g0["clocks"]["throttle_reasons"] is None
    assert g0["power_w"] == 550.5 and g0["temperature_c"] == 67
    assert g1["utilization"] == {"gpu_usage_percent": 5, "memory_activity_percent": None}
    assert g1["memory"]["used_bytes"] == 1 << 30 and g1["power_w"] is None
' "$WORK/amd.jsonl"

expect_rc 0 "monitor --pid with AMD GPUs" "$KS" monitor --pid "$idle" --interval 50 \
    --duration 0.3 -o "$WORK/amdproc.jsonl"
check_py "AMD GPU memory of the followed process (none: it uses no GPU)" '
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
assert len(recs) >= 1
for r in recs:
    assert r["gpus"]["amd0"]["memory"]["process_used_bytes"] == 0, r["gpus"]["amd0"]
    assert r["gpus"]["amd1"]["memory"]["process_used_bytes"] == 0
' "$WORK/amdproc.jsonl"

expect_rc 0 "monitor AMD GPUs into CSV" "$KS" monitor --interval 50 --duration 0.3 \
    -o "$WORK/amd.csv"
check_py "AMD CSV columns" '
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert len(rows) >= 1
assert not [k for k in rows[0] if k.startswith("nv")], list(rows[0])
for r in rows:
    assert r["amd0_gpu_usage_percent"] == "88" and r["amd0_power_w"] == "550.5"
    assert r["amd0_core_max_mhz"] == "2100" and r["amd0_temperature_c"] == "67"
    assert r["amd0_throttle_reasons"] == "" and r["amd1_core_mhz"] == ""
    assert r["amd1_used_bytes"] == str(1 << 30)
' "$WORK/amd.csv"

expect_rc 0 "monitor AMD GPUs as a table" "$KS" monitor --interval 50 --duration 0.3
check_py "AMD table: a column group per GPU" '
import sys
lines = open(sys.argv[1]).read().splitlines()
assert lines[0].count("| amd") == 2, lines[0]
for row in lines[1:]:
    cols = row.split()
    g0 = cols[cols.index("amd0") + 1:cols.index("amd1") - 1]
    g1 = cols[cols.index("amd1") + 1:]
    assert g0 == ["88", "40960", "-", "1200", "550.5", "67", "-"], g0
    assert g1 == ["5", "1024", "-", "-", "-", "-", "-"], g1
' "$WORK/out"

# NVIDIA's stand-in too: its GPUs first (nv0, nv1), then AMD's.
KSCOPE_NVML_LIBRARY=$FAKE_NVML expect_rc 0 "monitor NVIDIA and AMD GPUs" "$KS" monitor \
    --interval 50 --duration 0.3 -o "$WORK/both.csv"
check_py "both vendors' columns, in order" '
import csv, sys
header = next(csv.reader(open(sys.argv[1])))
gpus = [c.split("_")[0] for c in header if c.endswith("_gpu_usage_percent")]
assert gpus == ["nv0", "nv1", "amd0", "amd1"], gpus
rows = list(csv.DictReader(open(sys.argv[1])))
assert rows[0]["nv0_gpu_usage_percent"] == "97" and rows[0]["amd0_gpu_usage_percent"] == "88"
' "$WORK/both.csv"
finish
