# cli-monitor.sh - `kscope monitor` on real processes: CPU of a busy and an
# idle process never more than their own account, a command's exit status,
# CSV and JSONL parsed back, never more samples than the interval allows,
# GPU columns from the stand-in NVML, NVML missing, and refused options.
# How many samples a second this machine gets, and how close the CPU
# measured comes to what a process used, are bench/bench_sampling.sh's.
. "$KSCOPE_SOURCE_DIR/test/monitor-lib.sh"

# check_py DESCRIPTION SCRIPT ARGS...: a Python check that prints its verdict.
check_py() {
    local what=$1 script=$2
    shift 2
    if msg=$("$PY" -c "$script" "$@" 2>&1); then ok "$what${msg:+: $msg}"; else fail "$what: $msg"; fi
}

# Summary of a CSV file: rows, and the CPU seconds the samples add up to
# (percent x interval), against what the process used by its own account
# (/proc ticks, read before the monitor started and after it ended: "CPU
# SECONDS"). The samples cover part of that span, so they add up to no more
# than it (to a tick's rounding per sample), whatever the machine's load:
# how close they come is bench/bench_sampling.sh's figure.
CSV_CHECK='
import csv, os, sys
rows = list(csv.DictReader(open(sys.argv[1])))
tick = 1.0 / os.sysconf("SC_CLK_TCK")
before, after = map(int, sys.argv[2].split())  # CPU ticks around the run
used, most = (after - before) * tick, int(sys.argv[3])
# never more samples than the interval allows (the ticks and the stop)
assert 1 <= len(rows) <= most, "%d rows, at most %d" % (len(rows), most)
ts = [float(r["t_s"]) for r in rows]
assert ts == sorted(ts) and ts[0] > 0, "times not increasing"
measured, prev = 0.0, 0.0
for r in rows:
    measured += float(r["cpu_percent"]) / 100 * (float(r["t_s"]) - prev)
    prev = float(r["t_s"])
assert measured <= used + tick, "%.3f s of CPU measured, the process used %.3f s" % (measured, used)
for r in rows:
    assert abs(float(r["cpu_percent"]) - float(r["user_percent"]) - float(r["system_percent"])) < 1e-6
    assert int(r["rss_bytes"]) > 0 and int(r["threads"]) >= 1 and r["alive"] == "1"
print("%d rows, %.3f s CPU measured of %.3f s used" % (len(rows), measured, used))
'

# cpu_mark PID: the CPU ticks of a process now, from /proc (in the shell
# itself: no process start-up between the reading and the run).
cpu_mark() {
    local stat
    read -r stat <"/proc/$1/stat"
    set -- ${stat##*) }
    echo $((${12} + ${13}))
}

# no_more_than_used KIND PID: `kscope monitor --pid PID` for 1 s into
# $WORK/KIND.csv measures no more CPU than the process used meanwhile.
no_more_than_used() {
    local before after
    before=$(cpu_mark "$2")
    expect_rc 0 "monitor --pid ($1) for 1 s" "$KS" monitor --pid "$2" --interval 50 \
        --duration 1 -o "$WORK/$1.csv"
    after=$(cpu_mark "$2")
    check_py "$1 process: no more CPU measured than it used" "$CSV_CHECK" "$WORK/$1.csv" \
        "$before $after" 22
}

# A busy and an idle process: no more CPU measured than each used.
start_busy
busy=$!
no_more_than_used busy "$busy"
start_idle
idle=$!
no_more_than_used idle "$idle"
grep -q "no GPU metrics: cannot load NVML" "$WORK/err" && ok "NVML missing: said so" ||
    fail "NVML missing: no message: $(cat "$WORK/err")"
[ "$(wc -l <"$WORK/err")" -eq 1 ] && ok "NVML missing: one line" ||
    fail "NVML missing: $(wc -l <"$WORK/err") lines of messages"
head -1 "$WORK/idle.csv" | grep -q "nv0" && fail "GPU columns without NVML" ||
    ok "no GPU columns without NVML"

# At 10 ms for 1 s: no more than 101 samples.
before=$(cpu_mark "$idle")
expect_rc 0 "monitor at 10 ms for 1 s" "$KS" monitor --pid "$idle" --interval 10 \
    --duration 1 -o "$WORK/fast.csv"
check_py "10 ms x 1 s gives at most 101 samples" "$CSV_CHECK" "$WORK/fast.csv" "$before $(cpu_mark "$idle")" 101

# JSONL, parsed back: a command's CPU, no more than its own account
# (os.times, taken once its work is done; it then sleeps, using none, so
# every sample while it lives comes before or at that account).
JSONL_CHECK='
import json, os, sys
recs = [json.loads(l) for l in open(sys.argv[1]).read().splitlines()]
assert len(recs) >= 2, "only %d records" % len(recs)
for r in recs:
    assert set(r) == {"t_s", "cpu", "gpus"}, sorted(r)
    c = r["cpu"]
    assert c["processes"] == 1 and set(c) >= {"cpu_percent", "user_percent", "system_percent", "rss_bytes", "threads", "alive"}
    assert r["gpus"] == {}
assert recs[0]["cpu"]["alive"] == 1 and recs[-1]["cpu"]["alive"] == 0, "command not seen ending"
measured, prev = 0.0, 0.0
for r in recs:
    if r["cpu"]["alive"]:
        measured += r["cpu"]["cpu_percent"] / 100 * (r["t_s"] - prev)
    prev = r["t_s"]
own = float(open(sys.argv[2]).read())
tick = 1.0 / os.sysconf("SC_CLK_TCK")
assert measured <= own + 2 * tick, "measured %.3f s of CPU, the command used %.3f s" % (measured, own)
print("%d records, %.3f s CPU measured, %.3f s used" % (len(recs), measured, own))
'
expect_rc 0 "monitor -- COMMAND into JSONL" "$KS" monitor --no-gpu --interval 50 \
    -o "$WORK/cmd.jsonl" -- "$PY" -c 'import os, sys, time
t = time.time()
while time.time() - t < 0.6: pass
u = os.times()
open(sys.argv[1], "w").write(str(u.user + u.system))
time.sleep(0.3)' "$WORK/cmd.own"
check_py "JSONL parsed back, no more CPU than the command's own" "$JSONL_CHECK" "$WORK/cmd.jsonl" "$WORK/cmd.own"

# The command's exit status is monitor's.
expect_rc 7 "exit status of the command" "$KS" monitor --no-gpu -- sh -c 'exit 7'
expect_rc 143 "command killed by SIGTERM gives 128+15" "$KS" monitor --no-gpu -- sh -c 'kill -TERM $$'
expect_rc 127 "command that cannot run" "$KS" monitor --no-gpu -- /nonexistent/program
expect_err "cannot run '/nonexistent/program'" "says the command cannot run"

# A closed standard output ends the table, not the run.
"$KS" monitor --no-gpu --interval 10 -- sh -c 'sleep 0.5; exit 5' 2>/dev/null | head -1 >/dev/null
rc=${PIPESTATUS[0]}
[ "$rc" -eq 5 ] && ok "stdout closed early: still the command's status" ||
    fail "stdout closed early: exit $rc, expected 5"

# Following processes ends when they all exit.
sleep 0.4 &
short=$!
# (a monitor that went on would hang here until CTest's time limit)
expect_rc 0 "monitor --pid stops when the process exits" "$KS" monitor --pid "$short" \
    --interval 20 -o "$WORK/short.csv"

# A pid given twice is followed once.
expect_rc 0 "--pid given twice" "$KS" monitor --pid "$idle,$idle" --pid "$idle" --duration 0.2 \
    --interval 50 -o "$WORK/twice.jsonl"
check_py "followed once" '
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
assert recs and all(r["cpu"]["processes"] == 1 for r in recs)
' "$WORK/twice.jsonl"

# --port follows the server and its child.
start_server 4 "$WORK/server" || fail "server did not start"
read -r port server child <"$WORK/server"
expect_rc 0 "monitor --port" "$KS" monitor --port "$port" --interval 50 --duration 0.3 \
    -o "$WORK/port.jsonl"
check_py "--port follows 2 processes" '
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
assert recs and all(r["cpu"]["processes"] == 2 and r["cpu"]["alive"] == 2 for r in recs), recs[:1]
' "$WORK/port.jsonl"

# SIGTERM ends a monitor without a command cleanly, output complete.
"$KS" monitor --pid "$idle" --interval 20 -o "$WORK/term.jsonl" 2>/dev/null &
mon=$!
sleep 0.5
kill -TERM "$mon"
wait "$mon"
rc=$?
[ "$rc" -eq 0 ] && ok "SIGTERM: exit 0" || fail "SIGTERM: exit $rc"
check_py "SIGTERM: every line whole" '
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
assert len(recs) >= 1, len(recs)
' "$WORK/term.jsonl"

# GPUs through the stand-in NVML: fields, absent ones, throttle reasons.
export KSCOPE_NVML_LIBRARY=$FAKE_NVML
expect_rc 0 "monitor GPUs (stand-in NVML) into JSONL" "$KS" monitor --interval 50 \
    --duration 0.3 -o "$WORK/gpu.jsonl"
check_py "GPU JSONL fields" '
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
assert len(recs) >= 1
for r in recs:
    assert r["cpu"] is None
    g0, g1 = r["gpus"]["nv0"], r["gpus"]["nv1"]
    assert g0["utilization"] == {"gpu_usage_percent": 97, "memory_activity_percent": 41}
    assert g0["memory"]["total_bytes"] == 80 << 30 and g0["memory"]["reserved_bytes"] == 512 << 20
    assert g0["clocks"]["core_mhz"] == 1755 and g0["clocks"]["core_max_mhz"] == 1980
    assert g0["clocks"]["throttle_reasons"] == ["sw_power_cap", "hw_thermal_slowdown"]
    assert g0["clocks"]["hardware_throttled"] is True
    assert g0["power_w"] == 412.345 and g0["temperature_c"] == 61
    assert g1["utilization"]["gpu_usage_percent"] is None
    assert g1["memory"]["used_bytes"] == 2 << 30 and g1["memory"]["reserved_bytes"] is None
    assert g1["clocks"]["throttle_reasons"] is None and g1["power_w"] is None
    assert g0["memory"]["process_used_bytes"] is None  # no process followed
' "$WORK/gpu.jsonl"
FAKE_NVML_PID=$idle expect_rc 0 "monitor --pid with GPUs" "$KS" monitor --pid "$idle" \
    --interval 50 --duration 0.3 -o "$WORK/gpuproc.jsonl"
check_py "GPU memory of the followed process" '
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
assert len(recs) >= 1
for r in recs:
    assert r["gpus"]["nv0"]["memory"]["process_used_bytes"] == 64 << 20, r["gpus"]["nv0"]["memory"]
    assert r["gpus"]["nv1"]["memory"]["process_used_bytes"] == 0
' "$WORK/gpuproc.jsonl"
expect_rc 0 "monitor GPUs into CSV" "$KS" monitor --interval 50 --duration 0.3 -o "$WORK/gpu.csv"
check_py "GPU CSV columns" '
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert len(rows) >= 1
for r in rows:
    assert r["cpu_percent"] == ""
    assert r["nv0_gpu_usage_percent"] == "97" and r["nv0_power_w"] == "412.345"
    assert r["nv0_throttle_reasons"] == "sw_power_cap;hw_thermal_slowdown"
    assert r["nv0_hardware_throttled"] == "1"
    assert r["nv1_power_w"] == "" and r["nv1_used_bytes"] == str(2 << 30)
    assert r["nv0_process_used_bytes"] == ""
' "$WORK/gpu.csv"
expect_rc 0 "monitor GPUs as a table on stdout" "$KS" monitor --interval 50 --duration 0.3
check_py "GPU table: a column group per GPU, absent fields as -" '
import sys
lines = open(sys.argv[1]).read().splitlines()
assert lines[0].split()[:6] == ["time_s", "cpu_%", "rss_MiB", "thr", "|", "nv0"], lines[0]
assert lines[0].count("| nv") == 2, lines[0]
assert len(lines) >= 2
for row in lines[1:]:
    cols = row.split()
    assert cols[1:4] == ["-", "-", "-"], row  # no process followed
    g0 = cols[cols.index("nv0") + 1:cols.index("nv1") - 1]
    g1 = cols[cols.index("nv1") + 1:]
    assert g0 == ["97", "10240", "-", "1755", "412.3", "61", "sw_power_cap,hw_thermal_slowdown"], g0
    assert g1 == ["-", "2048", "-", "1754", "-", "-", "-"], g1
' "$WORK/out"
expect_rc 0 "--no-gpu leaves GPUs out" "$KS" monitor --no-gpu --pid "$idle" --duration 0.2 \
    -o "$WORK/nogpu.csv"
head -1 "$WORK/nogpu.csv" | grep -q nv0 && fail "--no-gpu wrote GPU columns" || ok "no GPU columns"
export KSCOPE_NVML_LIBRARY=/nonexistent/libnvidia-ml.so.1

# Refused options and bad processes.
expect_rc 2 "interval below 1 ms refused" "$KS" monitor --interval 0.5 --pid "$idle"
expect_err "--interval '0.5' refused: at least 1 ms" "names the refused interval"
expect_rc 2 "bad -o extension" "$KS" monitor --pid "$idle" -o "$WORK/x.txt"
expect_err "must end in .csv or .jsonl" "names the accepted extensions"
expect_rc 1 "a PID that does not exist" "$KS" monitor --pid 1073741823 --duration 0.1
expect_err "no process 1073741823" "names the missing process"
expect_rc 2 "bad --pid" "$KS" monitor --pid 12x
expect_rc 1 "--port nobody listens on" "$KS" monitor --port "$("$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')"
expect_err "no process listens on TCP port" "says nobody listens"
expect_rc 2 "--pid with a COMMAND" "$KS" monitor --pid "$idle" -- true
expect_rc 2 "nothing after --" "$KS" monitor --
expect_rc 1 "nothing to monitor" "$KS" monitor --duration 0.1
expect_err "nothing to monitor" "says there is nothing to monitor"
expect_rc 1 "unwritable output" "$KS" monitor --pid "$idle" --duration 0.1 -o /nonexistent/dir/x.csv
expect_err "cannot write '/nonexistent/dir/x.csv'" "names the unwritable file"
expect_rc 2 "unknown option" "$KS" monitor --bogus
expect_err "unknown option '--bogus'" "names the unknown option"
expect_rc 2 "--duration without a value" "$KS" monitor --duration
expect_err "--duration needs a value" "says --duration needs a value"
expect_rc 2 "--duration 0" "$KS" monitor --duration 0 -- true
expect_err "bad --duration '0' (seconds, above 0)" "names the refused duration"
expect_rc 2 "--port out of range" "$KS" monitor --port 99999
expect_err "bad --port '99999' (expected 1..65535)" "names the refused port"
expect_rc 2 "--pid with --port" "$KS" monitor --pid "$idle" --port 80
expect_err "--pid and --port cannot be combined" "says they cannot be combined"
expect_rc 0 "help" "$KS" help monitor
grep -q -- "--interval MS" "$WORK/out" && ok "help describes --interval" || fail "help lacks --interval"

finish
