"""report-screens.py - the pictures of the HTML report in docs/cli.md, one per
view, made from the bundled example run under `kscope run` (and, for the
top kernels, Proton's file in test/data/proton/, as the example launches
no kernels, and for the source lines a profile with PC samples from
test/data/kscope/); test/browser/report_test.py checks that each view the
page has is pictured here and in docs/cli.md:
    python3 tools/report-screens.py [BUILD_DIR]   # writes docs/img/report-*.png
Needs chromium (tools/setup-deps.sh) and a build (tools/demo.sh)."""
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "test", "browser"))
import cdp  # noqa: E402

build = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build"))
ks, work = os.path.join(build, "kscope"), tempfile.mkdtemp(prefix="kscope-screens-")


def page_for(name, *profiles):
    out = os.path.join(work, name + ".html")
    subprocess.run([ks, "report", "--html", out, *profiles], check=True)
    return "file://" + out


def example(name, data):
    """The example under `kscope run`, so the header shows the run's facts
    (the command as typed: ./example, run in the work folder)."""
    link = os.path.join(work, "example")
    if not os.path.exists(link):
        os.symlink(os.path.join(build, "example"), link)
    subprocess.run([ks, "run", "-n", name, "-d", data, "--", "./example"], check=True, cwd=work,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return os.path.join(work, name + (".chrome_trace" if data == "trace" else ".hatchet"))


shots = [("flame", page_for("tree", example("a", "tree")), "kscopeReport.search('layer')"),
         ("timeline", page_for("trace", example("t", "trace")), "kscopeReport.show('timeline')"),
         ("top", page_for("top", os.path.join(ROOT, "test/data/proton/rich_tree.hatchet")),
          "kscopeReport.show('top')"),
         ("diff", page_for("diff", example("b", "tree"), example("c", "tree")), "kscopeReport.show('diff')"),
         ("lines", page_for("lines", os.path.join(ROOT, "test/data/kscope/pcsampling.hatchet")),
          "kscopeReport.show('lines')")]
browser = cdp.Browser(cdp.find_chromium())
try:
    page = browser.open_page()
    page.send("Emulation.setDeviceMetricsOverride",
              {"width": 1000, "height": 420, "deviceScaleFactor": 1, "mobile": False})
    for name, url, action in shots:
        page.goto(url)
        page.eval(action)
        if name == "timeline":  # the pointer on a scope: its args show
            box = page.eval("kscopeReport.timeline.boxes().filter(b => b.name === 'forward')[1]")
            page.send("Input.dispatchMouseEvent", {"type": "mouseMoved", "x": (box["x0"] + box["x1"]) / 2,
                                                   "y": (box["y0"] + box["y1"]) / 2})
        page.screenshot(os.path.join(ROOT, "docs", "img", f"report-{name}.png"))
finally:
    browser.close()
