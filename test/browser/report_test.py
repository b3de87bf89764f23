"""report_test.py - `kscope report --html` pages checked in a real headless
Chromium: each kind of profile (tree, trace, merged ranks, diff, empty,
hostile names, aggregated, B/E events, PC samples) loads with no console
error and no request leaving the page; clicking a node zooms to it; search
totals its matches; a profile with PC samples lists each kernel's hottest
source lines with their main stall reasons (as `kscope view --lines`); the timeline zooms from the keyboard, draws B/E pairs and
shows a slice's args on hover; the header shows the run's facts; a big
trace becomes interactive within 3 s; each view is pictured in
docs/cli.md. Screenshots are kept in the build tree (report-screens/).

Exit 77 (skipped) when no Chromium is installed, except under CI, where
tools/setup-deps.sh installs it and its absence is a failure."""
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cdp  # noqa: E402

KS = os.environ["KSCOPE_CLI"]
SRC = os.environ["KSCOPE_SOURCE_DIR"]
BIN = os.environ["KSCOPE_BINARY_DIR"]
WORK = os.path.join(BIN, "report-screens")
HOSTILE = '</script><script>window.pwned=1</script>'
fails = []


def check(what, ok, detail=""):
    print(("ok: " if ok else "FAIL: ") + what + ("" if ok else f" ({detail})"))
    if not ok:
        fails.append(what)


def report(out, *profiles, extra=()):
    path = os.path.join(WORK, out)
    subprocess.run([KS, "report", *extra, "--html", path, *profiles], check=True)
    return path


def run_env():
    """The environment for `kscope run`: in a sanitizer build, libkscope.so
    needs the sanitizer runtime first in every process it is preloaded into
    (as test/run-lib.sh does)."""
    env = dict(os.environ)
    ldd = subprocess.run(["ldd", os.path.join(BIN, "libkscope.so")], capture_output=True, text=True).stdout
    if "libasan" in ldd:
        asan = subprocess.run(["cc", "-print-file-name=libasan.so"], capture_output=True, text=True).stdout
        env["LD_PRELOAD"] = asan.strip()
        env["ASAN_OPTIONS"] = "detect_leaks=0:verify_asan_link_order=0"
    return env


def make_inputs():
    data = os.path.join(SRC, "test", "data", "proton")
    tree, trace = os.path.join(data, "rich_tree.hatchet"), os.path.join(data, "rich_trace.chrome_trace")
    merged = os.path.join(WORK, "merged.hatchet")
    subprocess.run([KS, "merge", "-o", merged, tree, tree], check=True, stdout=subprocess.DEVNULL)
    own = os.path.join(WORK, "example")
    subprocess.run([os.path.join(BIN, "example"), own, "trace"], check=True, stdout=subprocess.DEVNULL)
    # a tree from `kscope run`, with the run's facts beside it
    subprocess.run([KS, "run", "-o", WORK, "-n", "ran", "--", os.path.join(BIN, "example"), "x", "tree"],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=run_env())
    empty = os.path.join(WORK, "empty.hatchet")
    with open(empty, "w") as f:
        f.write('[{"frame":{"name":"ROOT","type":"function"},"metrics":{},"children":[]},{}]')
    hostile = os.path.join(WORK, "hostile.json")
    # The readers refuse control characters in slice names; a thread's
    # name from the metadata can still hold them.
    names = [HOSTILE, '"quoted" & \'single\'', "line\u2028sep\u2029x",
             '<img src=x onerror="window.pwned=2">']
    events = [{"name": n, "cat": "kernel", "ph": "X", "pid": 1, "tid": 7, "ts": 10.0 * i, "dur": 5.0,
               "args": {"call_stack": ["ROOT", n, n]}} for i, n in enumerate(names)]
    events.append({"name": "thread_name", "ph": "M", "pid": 1, "tid": 7, "args": {"name": HOSTILE}})
    events.append({"name": "thread_name", "ph": "M", "pid": 1, "tid": 8, "args": {"name": "ctl\u0001\u0007"}})
    events.append({"name": "mark </b>", "ph": "i", "pid": 1, "tid": 8, "ts": 3.0, "s": "t"})
    with open(hostile, "w") as f:
        json.dump({"traceEvents": events, "metadata": {"command": HOSTILE, "host": names[3]}}, f)
    return {"tree": tree, "trace": trace, "merged": merged, "own": own + ".chrome_trace", "empty": empty,
            "hostile": hostile, "ran": os.path.join(WORK, "ran.hatchet"), "be": be_trace()}


def be_trace():
    """A trace in another tool's manner: "B"/"E" pairs (nested, out of
    order in the file, args on both ends), an "E" with nothing open, a "B"
    that never ends, a slice 3000 years in (beyond what the timeline
    places), and Chrome's own metadata."""
    path = os.path.join(WORK, "be.json")
    ev = [{"name": "inner", "ph": "B", "pid": 5, "tid": 1, "ts": 20, "args": {"step": 3}},
          {"name": "outer", "ph": "B", "pid": 5, "tid": 1, "ts": 10, "args": {"phase": "load"}},
          {"ph": "E", "pid": 5, "tid": 1, "ts": 60, "args": {"result": "ok"}},
          {"ph": "E", "pid": 5, "tid": 1, "ts": 100},
          {"ph": "E", "pid": 5, "tid": 2, "ts": 5},
          {"name": "open end", "ph": "B", "pid": 5, "tid": 2, "ts": 30},
          {"name": "x slice", "ph": "X", "pid": 5, "tid": 2, "ts": 10, "dur": 10,
           "args": {"call_stack": ["ROOT", "a", "x slice"], "bytes": 4096}},
          {"name": "far away", "ph": "X", "pid": 5, "tid": 2, "ts": 1e17, "dur": 1},
          {"name": "thread_name", "ph": "M", "pid": 5, "tid": 1, "args": {"name": "worker"}},
          {"name": "checkpoint", "ph": "i", "pid": 5, "tid": 1, "ts": 50, "s": "t",
           "args": {"note": "has # and \" inside", "ids": [7, 8]}}]
    with open(path, "w") as f:
        json.dump({"traceEvents": ev, "metadata": {"command_line": "chrome --trace", "nested": {"a": 1}}}, f)
    return path


def hover_tip(page, box):
    page.send("Input.dispatchMouseEvent", {"type": "mouseMoved", "x": (box["x0"] + box["x1"]) / 2,
                                           "y": (box["y0"] + box["y1"]) / 2})
    return page.eval("document.getElementById('tip').hidden ? '' : document.getElementById('tip').textContent")


def timeline_checks(page):
    """The B/E trace: slices from pairs, nested, with their args on hover."""
    page.eval("kscopeReport.show('timeline')")
    boxes = {b["name"]: b for b in page.eval("kscopeReport.timeline.boxes()")}
    check("B/E pairs become slices", {"outer", "inner", "open end", "x slice"} <= set(boxes), sorted(boxes))
    outer, inner = boxes.get("outer", {}), boxes.get("inner", {})
    check("B/E: outer spans 10..100 us, inner 20..60 us, nested under it",
          outer.get("dur") == 90000 and inner.get("dur") == 40000 and inner.get("depth") == 1
          and outer.get("depth") == 0, (outer, inner))
    check("a B never ended runs to the trace's end", boxes.get("open end", {}).get("dur") == 70000,
          boxes.get("open end"))
    check("the page says a slice never ended",
          "1 slices began" in page.eval("document.getElementById('notes').textContent"))
    check("a slice too far in time is not drawn, and the page says so",
          "far away" not in boxes and "1 events have a time or duration beyond 4e15 us"
          in page.eval("document.getElementById('notes').textContent"))
    tip = hover_tip(page, inner)
    check("hover on a B/E slice shows its args, B's and E's merged",
          "step: 3" in tip and "result: ok" in tip and "duration 40.000 us" in tip, tip)
    tip = hover_tip(page, boxes["x slice"])
    check("hover on an X slice shows its args", "call_stack: ROOT > a > x slice" in tip and "bytes: 4096" in tip,
          tip)
    tip = hover_tip(page, boxes["checkpoint"])
    check("hover on a mark shows its args", 'note: has # and " inside' in tip and "ids: [7,8]" in tip, tip)
    check("Chrome's command_line is the command", "chrome --trace" in page.eval(
        "document.getElementById('fact-list').textContent"))


def run_facts_checks(page, name, facts):
    text = page.eval("document.getElementById('fact-list').textContent")
    check(f"{name}: the header shows the command, host, start and version",
          all(facts[k] in text for k in ("command", "host", "start_time", "kscope_version")), text[:300])


def pictures_checks(page, want):
    """Each view the page offers is pictured in docs/cli.md, and made by
    tools/report-screens.py (a diff of two traces has every view but the
    source lines, which a profile with PC samples adds)."""
    views = page.eval("[...document.querySelectorAll('#tabs button')].map(b => b.dataset.view)")
    with open(os.path.join(SRC, "docs", "cli.md")) as f:
        page = f.read()
    with open(os.path.join(SRC, "tools", "report-screens.py")) as f:
        screens = f.read()
    check(f"the page has the views {want}", sorted(views) == sorted(want), views)
    for v in views:
        img = f"img/report-{v}.png"
        check(f"view {v}: pictured in docs/cli.md ({img}), made by tools/report-screens.py",
              f"]({img})" in page and os.path.isfile(os.path.join(SRC, "docs", img)) and f'("{v}",' in screens)


def pcs_hostile():
    """A profile with PC samples whose kernel and line names are markup."""
    path = os.path.join(WORK, "pcs-hostile.hatchet")
    line = {"frame": {"name": "/x.cu:1@" + HOSTILE}, "metrics": {"num_samples": 5, "stalled_wait": 5},
            "children": []}
    kernel = {"frame": {"name": HOSTILE}, "metrics": {"count": 1, "time (ns)": 10, "device_type": "CUDA",
                                                       "device_id": "0"}, "children": [line]}
    with open(path, "w") as f:
        json.dump([{"frame": {"name": "ROOT"}, "metrics": {"count": 0, "time (ns)": 0, "num_samples": 0},
                    "children": [kernel]}, {}], f)
    return path


def lines_checks(page):
    """kscope's PC-sampling fixture: the kernels heaviest first, each line
    with its samples and main stall reasons, as `kscope view --lines`
    prints them (test/golden/read/view-lines.txt)."""
    page.eval("kscopeReport.show('lines')")
    got = page.eval("kscopeReport.lines")
    check("source lines: the kernels, heaviest first",
          [k["name"] for k in got] == ["chain_kernel(float*, int)", "elementwise_kernel"], got)
    chain = got[0] if got else {"lines": []}
    check("source lines: a kernel's samples and main stall reasons",
          chain.get("samples") == 1100 and chain.get("reasons") == "long_scoreboard 81%, selected 11%, wait 5%",
          chain)
    want = [{"line": "/src/pcs.cu:41@chain_kernel(float*, int)", "samples": 1000,
             "reasons": "long_scoreboard 89%, selected 6%, wait 5%"},
            {"line": "/src/pcs.cu:47@chain_kernel(float*, int)", "samples": 100,
             "reasons": "selected 60%, math_pipe_throttle 40%"}]
    check("source lines: hottest first, each with its main stall reasons", chain["lines"] == want,
          chain["lines"])
    text = page.eval("document.getElementById('view-lines').innerText")
    check("source lines: shown in the view, a kernel without line information said so",
          "/src/pcs.cu:41@chain_kernel(float*, int)" in text and "long_scoreboard 89%, selected 6%, wait 5%" in text
          and "(no line information)" in text and "87.0%" in text, text[:400])
    page.screenshot(os.path.join(WORK, "lines-view.png"))


def big_trace(n):
    """n kernels on 4 streams, each with args as kscope writes them (a call
    stack, and a correlation id, which makes every args text unique)."""
    path = os.path.join(WORK, "big.json")
    with open(path, "w") as f:
        f.write('{"traceEvents":[')
        f.write(",".join('{"name":"k%d","cat":"kernel","ph":"X","pid":1,"tid":%d,"ts":%d.5,"dur":0.4,'
                         '"args":{"call_stack":["ROOT","train","step","k%d"],"device":0,"stream":%d,'
                         '"correlation":%d}}' % (i % 50, i % 4, i, i % 50, i % 4, i) for i in range(n)))
        f.write("]}")
    return path


def loads_clean(page, name, path, shot=True):
    t = time.time()
    page.goto("file://" + path)
    took = time.time() - t
    problems = page.problems()
    check(f"{name}: loads with no console error and no request", not problems, problems[:3])
    check(f"{name}: drawn", page.eval("kscopeReport.state.ready === true"), "not ready")
    if shot:
        page.screenshot(os.path.join(WORK, name + ".png"))
    return took


def first_box(page, canvas, depth):
    return page.eval(f"""(() => {{ const c = document.getElementById('{canvas}');
        const r = c.getBoundingClientRect();
        const b = c.boxes.filter(b => b.depth === {depth} && b.w > 4)[0];
        return b && {{i: b.i, x: r.left + b.x + b.w / 2, y: r.top + b.depth * 18 + 9}}; }})()""")


def tree_checks(page):
    box = first_box(page, "flame-canvas", 1)
    page.click(box["x"], box["y"])
    check("click zooms to the node", page.eval("kscopeReport.state.zoom") == box["i"],
          page.eval("kscopeReport.state.zoom"))
    page.eval("kscopeReport.search('add_kernel')")
    state = page.eval("kscopeReport.state")
    check("search counts matches and their share", state["matches"] >= 2 and 0 < state["share"] <= 1,
          state)
    page.eval("kscopeReport.zoom(0)")
    page.eval("kscopeReport.show('top')")
    rows = page.eval("document.querySelectorAll('#top-table tbody tr').length")
    check("top kernels table has rows", rows >= 2, rows)
    page.eval("document.querySelectorAll('#top-table th')[2].click()")
    check("a header click sorts by it", page.eval(
        "document.querySelectorAll('#top-table th')[2].className.includes('sorted')"))


def main():
    exe = cdp.chromium_or_exit()
    os.makedirs(WORK, exist_ok=True)
    inputs = make_inputs()
    browser = cdp.Browser(exe)
    try:
        page = browser.open_page()
        loads_clean(page, "tree", report("tree.html", inputs["tree"]))
        check("CSP forbids every request",
              "default-src 'none'" in page.eval("document.querySelector('meta[http-equiv]').content"))
        tree_checks(page)
        loads_clean(page, "merged", report("merged.html", inputs["merged"]))
        loads_clean(page, "trace", report("trace.html", inputs["trace"]))
        page.eval("kscopeReport.show('timeline')")
        span = page.eval("kscopeReport.state.t1 - kscopeReport.state.t0")
        page.key("w")
        check("W zooms the timeline in", page.eval("kscopeReport.state.t1 - kscopeReport.state.t0") < span)
        page.screenshot(os.path.join(WORK, "trace-timeline.png"))
        loads_clean(page, "own-trace", report("own.html", inputs["own"]))
        with open(inputs["own"]) as f:
            run_facts_checks(page, "own trace", json.load(f)["metadata"])
        page.eval("kscopeReport.show('timeline')")
        page.screenshot(os.path.join(WORK, "own-timeline.png"))
        check("a profile without PC samples has no source-lines view",
              page.eval("document.querySelector('#tabs [data-view=lines]')") is None)
        loads_clean(page, "all-views", report("all.html", inputs["own"], inputs["own"]))
        pictures_checks(page, ["diff", "flame", "timeline", "top"])
        loads_clean(page, "pcsampling", report("pcs.html", os.path.join(SRC, "test", "data", "kscope",
                                                                        "pcsampling.hatchet")))
        pictures_checks(page, ["flame", "top", "lines"])
        lines_checks(page)
        loads_clean(page, "proton-pcsampling", report("proton-pcs.html", os.path.join(
            SRC, "test", "data", "proton", "pcsampling.hatchet")))
        page.eval("kscopeReport.show('lines')")
        got = page.eval("kscopeReport.lines")
        check("Proton's PC samples: the kernel and its lines read demangled",
              got and got[0]["name"] == "chain_kernel(float*, int)"
              and got[0]["lines"][0]["line"] == "/src/pcs.cu:41@chain_kernel(float*, int)"
              and got[0]["lines"][2]["line"] == "chain_kernel(float*, int)+0x1a0", got)
        loads_clean(page, "pcs-hostile", report("pcs-hostile.html", pcs_hostile()))
        page.eval("kscopeReport.show('lines')")
        check("hostile line names run nothing and show as text", page.eval("typeof window.pwned") == "undefined"
              and page.eval(f"document.getElementById('view-lines').innerText.includes({json.dumps(HOSTILE)})"))
        loads_clean(page, "run-tree", report("ran.html", inputs["ran"]))
        with open(inputs["ran"] + ".meta.json") as f:
            run_facts_checks(page, "kscope run tree", json.load(f))
        loads_clean(page, "be-trace", report("be.html", inputs["be"]))
        timeline_checks(page)
        page.screenshot(os.path.join(WORK, "be-timeline.png"))
        loads_clean(page, "diff", report("diff.html", inputs["tree"], inputs["merged"]))
        page.eval("kscopeReport.show('diff')")
        check("diff lists changes", page.eval("kscopeReport.state.diffRows") > 0)
        page.screenshot(os.path.join(WORK, "diff-view.png"))
        loads_clean(page, "empty", report("empty.html", inputs["empty"]))
        loads_clean(page, "hostile", report("hostile.html", inputs["hostile"]))
        page.eval("kscopeReport.show('top')")
        check("hostile names run nothing", page.eval("typeof window.pwned") == "undefined")
        check("hostile names show as text", page.eval(
            f"document.body.innerText.includes({json.dumps(HOSTILE)})"))
        check("a hostile command shows as text", page.eval(
            f"document.getElementById('fact-list').textContent.includes({json.dumps(HOSTILE)})"))
        check("no element made from a name", page.eval("document.querySelectorAll('img').length") == 0)
        loads_clean(page, "aggregated", report("lod.html", inputs["tree"], extra=("--max-nodes", "5")))
        check("aggregation is said on the page",
              "(other)" in page.eval("document.getElementById('notes').textContent"))
        page.eval("new Image().src = 'http://kscope.invalid/x.png'")
        check("a request the page tried is blocked",
              not any(u.startswith("http") for u in page.requests_through()), page.requests_through())
        big = big_trace(int(os.environ.get("KSCOPE_BIG_EVENTS", "300000")))
        html = report("big.html", big)
        ratio = os.path.getsize(html) / os.path.getsize(big)
        print(f"big trace page: {ratio:.2f} x the trace's size")
        check("a big trace's page is at most 1.2 x its size", ratio <= 1.2, f"{ratio:.2f}")
        took = loads_clean(page, "big", html, shot=False)
        print(f"big trace page interactive in {took:.2f} s")
        check("a big trace is interactive within 3 s", took < 3.0, f"{took:.2f} s")
        page.eval("kscopeReport.show('timeline')")
        page.eval("kscopeReport.timeline.zoomAt(2e4 / (kscopeReport.state.t1 - kscopeReport.state.t0), 0)")
        box = page.eval("kscopeReport.timeline.boxes().filter(b => !b.mark)[0]")
        tip = hover_tip(page, box)
        check("a big trace's args show on hover", "correlation:" in tip, tip)
    finally:
        browser.close()
    print(f"screenshots in {WORK}")
    sys.exit(1 if fails else 0)


if __name__ == "__main__":
    main()
