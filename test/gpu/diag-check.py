"""diag-check.py - reads back the JSONL `kscope monitor` wrote around
diag-load.py and prints PASS/FAIL lines: utilization above 90% during the
long matmul, memory used rising with the 8 GiB allocation, clocks, power and
temperature present, throttle reasons decoded into MAX's names."""
import json
import sys

GIB = 1 << 30
REASONS = {"gpu_idle", "applications_clocks_setting", "sw_power_cap", "hw_slowdown",
           "sync_boost", "sw_thermal_slowdown", "hw_thermal_slowdown",
           "hw_power_brake_slowdown", "display_clock_setting"}
HARDWARE = REASONS - {"gpu_idle", "applications_clocks_setting", "display_clock_setting"}

failed = 0


def check(ok, what):
    global failed
    failed += not ok
    print("%s  %s" % ("PASS" if ok else "FAIL", what), flush=True)


recs = [json.loads(line) for line in open(sys.argv[1])]
check(len(recs) >= 3, "monitor JSONL: %d samples at 50 ms over the load" % len(recs))
gpus = sorted(recs[0]["gpus"]) if recs else []
check(bool(gpus), "GPUs sampled: %s" % ", ".join(gpus))
if not gpus:
    sys.exit(1)

# The device torch used: the one whose memory rose most.
def used(r, g):
    return r["gpus"][g]["memory"]["used_bytes"] or 0

rise = {g: max(used(r, g) for r in recs) - used(recs[0], g) for g in gpus}
dev = max(rise, key=rise.get)
check(rise[dev] >= 8 * GIB,
      "memory used rising with an 8 GiB allocation: %s rose %.2f GiB" % (dev, rise[dev] / GIB))

proc = [r["gpus"][dev]["memory"].get("process_used_bytes") for r in recs]
known = [p for p in proc if p is not None]
check(bool(known) and max(known) >= 8 * GIB,
      "GPU memory of the monitored command: max %s over %d/%d samples reported" % (
          "%.2f GiB" % (max(known) / GIB) if known else "-", len(known), len(proc)))

util = [r["gpus"][dev]["utilization"]["gpu_usage_percent"] for r in recs]
busy = [u for u in util if u is not None and u > 90]
# (how many samples the matmul spans is the machine's business: at least one)
check(len(busy) >= 1,
      "utilization above 90%% during the long matmul: %d samples (%.1f s) above 90%%, max %s%%" % (
          len(busy), len(busy) * 0.05, max(u for u in util if u is not None)))
check(any(u is not None and u < 20 for u in util[:10]), "utilization low while idle first")

g = recs[-1]["gpus"][dev]
c = g["clocks"]
check(c["core_mhz"] and c["core_max_mhz"] and c["core_mhz"] <= c["core_max_mhz"] and c["mem_mhz"],
      "clocks: SM %s/%s MHz, memory %s/%s MHz" % (c["core_mhz"], c["core_max_mhz"], c["mem_mhz"],
                                                  c["mem_max_mhz"]))
check(g["power_w"] is not None and g["power_w"] > 10 and g["temperature_c"],
      "power %s W, temperature %s C" % (g["power_w"], g["temperature_c"]))
check(g["memory"]["total_bytes"] > 16 * GIB and g["utilization"]["memory_activity_percent"] is not None,
      "memory total %.1f GiB, reserved %s, activity %s%%" % (
          g["memory"]["total_bytes"] / GIB, g["memory"]["reserved_bytes"],
          g["utilization"]["memory_activity_percent"]))

seen = set()
decoded = True
for r in recs:
    cl = r["gpus"][dev]["clocks"]
    names = cl["throttle_reasons"]
    if names is None or not set(names) <= REASONS:
        decoded = False
        continue
    seen |= set(names)
    decoded &= cl["hardware_throttled"] == bool(set(names) & HARDWARE)
check(decoded, "throttle reasons decoded in every sample; seen: %s" % (", ".join(sorted(seen)) or "none"))

cpu = [r["cpu"]["cpu_percent"] for r in recs if r["cpu"]]
check(len(cpu) == len(recs) and max(cpu) > 50,
      "process CPU sampled with the GPU: max %.0f%%" % max(cpu or [0]))
sys.exit(1 if failed else 0)
