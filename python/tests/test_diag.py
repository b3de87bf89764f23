"""kscope.gpu and kscope.cpu: MAX's resource diagnostics. GPU figures come
from test/fake-nvml.c and test/fake-rocm-smi.c (stand-ins for NVML and ROCm
SMI built here) in a child process."""
import json
import os
import socket
import subprocess
import sys
import textwrap
import time

import pytest

import kscope.cpu as kcpu
import kscope.gpu as kgpu
from conftest import build_stand_in
from kscope import _kscope


@pytest.fixture(scope="module")
def fake_nvml(tmp_path_factory):
    return build_stand_in(tmp_path_factory.mktemp("nvml"), "nvml")


@pytest.fixture(scope="module")
def fake_rsmi(tmp_path_factory):
    return build_stand_in(tmp_path_factory.mktemp("rsmi"), "rocm-smi")


def run_child(code, nvml, rsmi="/nonexistent/librocm_smi64.so"):
    env = dict(os.environ, KSCOPE_NVML_LIBRARY=nvml, KSCOPE_ROCM_SMI_LIBRARY=rsmi)
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=env,
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout.strip().splitlines()[-1])


def test_gpu_stats_with_fake_nvml(fake_nvml):
    out = run_child("""
        import json, dataclasses
        import kscope.gpu as g
        with g.GPUDiagContext() as ctx:
            stats = ctx.get_stats()
            names = ctx.names()
            throttled = stats["nv0"].clocks.hardware_throttled
        print(json.dumps({"stats": {k: dataclasses.asdict(v) for k, v in stats.items()},
                          "names": names, "throttled": throttled}))
    """, fake_nvml)
    nv0, nv1 = out["stats"]["nv0"], out["stats"]["nv1"]
    assert out["names"] == {"nv0": "Fake GPU 0", "nv1": "Fake GPU 1"}
    assert nv0["memory"] == {"total_bytes": 80 << 30, "free_bytes": (80 << 30) - (512 << 20) - (10 << 30),
                             "used_bytes": 10 << 30, "reserved_bytes": 512 << 20}
    assert nv0["utilization"] == {"gpu_usage_percent": 97, "memory_activity_percent": 41}
    assert nv0["clocks"] == {"core_mhz": 1755, "core_max_mhz": 1980, "mem_mhz": 2619,
                             "mem_max_mhz": 2619,
                             "throttle_reasons": ["sw_power_cap", "hw_thermal_slowdown"]}
    assert nv0["power_mw"] == 412345 and nv0["temperature_c"] == 61
    assert out["throttled"] is True
    # device 1 reports less: absent fields are None, never an error
    assert nv1["memory"]["reserved_bytes"] is None and nv1["memory"]["total_bytes"] == 16 << 30
    assert nv1["utilization"]["memory_activity_percent"] is None
    assert nv1["clocks"]["mem_max_mhz"] is None and nv1["clocks"]["throttle_reasons"] is None
    assert nv1["power_mw"] is None and nv1["temperature_c"] is None


def test_background_recorder_with_fake_nvml(fake_nvml):
    """Samples of both GPUs; never more than its 10 ms ticks in the time it
    ran allow (an upper bound the schedule decides; how many a second this
    machine gets is bench/bench_sampling.sh's)."""
    out = run_child("""
        import json, time
        import kscope.gpu as g
        t0 = time.monotonic()
        with g.BackgroundRecorder(interval=0.01) as rec:
            time.sleep(0.3)
        ran = time.monotonic() - t0
        print(json.dumps({"n": len(rec.stats), "ran": ran, "keys": sorted(rec.stats[0]),
                          "util": rec.stats[-1]["nv0"].utilization.gpu_usage_percent}))
    """, fake_nvml)
    assert 1 <= out["n"] <= out["ran"] / 0.01 + 1  # the ticks and the sample at stop
    assert out["keys"] == ["nv0", "nv1"] and out["util"] == 97


def test_gpu_without_nvml():
    """As MAX's: one error per vendor whose library did not load."""
    out = run_child("""
        import json
        import kscope.gpu as g
        with g.GPUDiagContext() as ctx:
            print(json.dumps({"stats": ctx.get_stats(),
                              "errors": [[k, str(e)] for k, e in ctx.errors]}))
    """, "/nonexistent/libnvidia-ml.so.1")
    assert out["stats"] == {}
    assert [k for k, _ in out["errors"]] == ["nv", "amd"]
    assert "cannot load NVML" in out["errors"][0][1]
    assert "cannot load ROCm SMI: /nonexistent/librocm_smi64.so" in out["errors"][1][1]


def test_gpu_stats_with_fake_rocm_smi(fake_nvml, fake_rsmi):
    """AMD GPUs as MAX names them (amd0, amd1), after NVIDIA's, with MAX's
    fields for AMD (no reserved memory, no throttle reasons), in
    GPUDiagContext and in the background recorder's stats."""
    out = run_child("""
        import json, dataclasses, time
        import kscope.gpu as g
        with g.GPUDiagContext() as ctx:
            stats = ctx.get_stats()
            names = ctx.names()
            errors = ctx.errors
        with g.BackgroundRecorder(interval=0.01) as rec:
            time.sleep(0.05)
        print(json.dumps({"stats": {k: dataclasses.asdict(v) for k, v in stats.items()},
                          "names": names, "errors": len(errors), "keys": sorted(rec.stats[0]),
                          "rec": dataclasses.asdict(rec.stats[-1]["amd0"])}))
    """, fake_nvml, fake_rsmi)
    assert out["errors"] == 0
    assert list(out["stats"]) == ["nv0", "nv1", "amd0", "amd1"]
    assert out["names"]["amd0"] == "Fake AMD GPU 0" and out["names"]["nv0"] == "Fake GPU 0"
    amd0, amd1 = out["stats"]["amd0"], out["stats"]["amd1"]
    assert amd0["memory"] == {"total_bytes": 192 << 30, "free_bytes": 152 << 30,
                              "used_bytes": 40 << 30, "reserved_bytes": None}
    assert amd0["utilization"] == {"gpu_usage_percent": 88, "memory_activity_percent": 23}
    assert amd0["clocks"] == {"core_mhz": 1200, "core_max_mhz": 2100, "mem_mhz": 1300,
                              "mem_max_mhz": 1300, "throttle_reasons": None}
    assert amd0["power_mw"] == 550500 and amd0["temperature_c"] == 67
    assert amd1["utilization"] == {"gpu_usage_percent": 5, "memory_activity_percent": None}
    assert amd1["clocks"] is None and amd1["power_mw"] is None
    assert out["keys"] == ["amd0", "amd1", "nv0", "nv1"]
    assert out["rec"] == amd0


def test_recorder_misuse():
    with pytest.raises(ValueError, match="non-negative"):
        kgpu.BackgroundRecorder(interval=-0.5)
    rec = kgpu.BackgroundRecorder(interval=0.01)
    with pytest.raises(RuntimeError, match="not finished"):
        rec.stats
    with rec:
        pass
    assert isinstance(rec.stats, list)
    with pytest.raises(RuntimeError, match="used once"):
        with rec:
            pass
    with pytest.raises(ValueError, match="interval"):
        _kscope.Recorder(0.5)
    assert kgpu.GPUDiagContext().get_stats() == {}  # outside `with`, as MAX


def test_low_level_recorder_follows_processes():
    rec = _kscope.Recorder(5.0, [os.getpid()], no_gpu=True, capacity=4)
    while rec.dropped == 0:  # a fifth sample: the ring of 4 is full
        time.sleep(0.005)
    rec.stop()
    samples = rec.samples()
    assert len(samples) == 4 and rec.dropped > 0 and rec.gpus == 0
    assert samples[-1]["nproc"] == 1 and samples[-1]["alive"] == 1
    assert samples[-1]["rss_bytes"] > 0 and samples[-1]["gpus"] == []
    with pytest.raises(RuntimeError):
        rec.stop()  # already stopped


def spawn(code):
    """A Python child running `code` once it said "ready" (its start-up,
    slow on a loaded machine, is over before anything is measured)."""
    p = subprocess.Popen([sys.executable, "-c", "print('ready', flush=True)\n" + code],
                         stdout=subprocess.PIPE, text=True)
    assert p.stdout.readline() == "ready\n"
    return p


def cpu_seconds(pid):
    """User + system CPU seconds of a process, from /proc (the ground truth
    the collector's figures must agree with)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def test_cpu_busy_idle_and_exited():
    """What the collector says against /proc and kscope's clock read just
    outside and just inside its block: the CPU each process used and the
    time that passed lie between the two readings, whatever the load."""
    busy = spawn("while True: pass")
    idle = spawn("import time; time.sleep(60)")
    short = spawn("import time; time.sleep(60)")
    try:
        pids = (busy.pid, idle.pid)
        out0, t_out0 = {p: cpu_seconds(p) for p in pids}, _kscope.now_ns()
        with kcpu.CPUMetricsCollector([busy.pid, idle.pid, short.pid]) as c:
            in0, t_in0 = {p: cpu_seconds(p) for p in pids}, _kscope.now_ns()
            time.sleep(0.8)  # the busy process works meanwhile
            short.kill()  # ends while followed
            short.wait()
            in1, t_in1 = {p: cpu_seconds(p) for p in pids}, _kscope.now_ns()
            stats = c.get_stats()
            # the same reading as stats (leaving the block reads again)
            per = {p.pid: p for p in c.processes}
            out1, t_out1 = {p: cpu_seconds(p) for p in pids}, _kscope.now_ns()
        inner, outer = (t_in1 - t_in0) / 1e9, (t_out1 - t_out0) / 1e9
        eps = 1e-9
        assert inner - eps <= stats.elapsed <= outer + eps
        for pid in pids:
            m = per[pid]
            used = m.user + m.system
            lo, hi = in1[pid] - in0[pid], out1[pid] - out0[pid]
            assert lo - eps <= used <= hi + eps, (pid, lo, used, hi)
            pct = m.user_percent + m.system_percent
            assert 100 * lo / outer - eps <= pct <= 100 * hi / inner + eps, (pid, pct, lo, hi)
        assert per[short.pid].exited and not per[busy.pid].exited
        assert stats.exited == 1
        assert stats.user + stats.system >= per[busy.pid].user + per[busy.pid].system - eps
        assert stats.threads >= 2 and stats.rss_bytes > 0
    finally:
        for p in (busy, idle, short):
            p.kill()
            p.wait()


def test_cpu_bad_pid():
    with kcpu.CPUMetricsCollector([999999, os.getpid()]) as c:  # skipped, as MAX
        pass
    assert c.get_stats().elapsed > 0 and [p.pid for p in c.processes] == [os.getpid()]
    with pytest.raises(RuntimeError, match="context manager"):
        kcpu.CPUMetricsCollector([os.getpid()]).get_stats()


def test_pids_for_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        assert os.getpid() in kcpu.collect_pids_for_port(port)
    assert kcpu.collect_pids_for_port(port) == []
    assert kcpu.collect_pids_for_port(70000) == []  # no port there: MAX's []
