"""report-screens.py - the README's pictures of the HTML report, made from
the bundled example (and, for the top kernels, Proton's file in
test/data/proton/, as the example launches no kernels):
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
    subprocess.run([os.path.join(build, "example"), os.path.join(work, name), data], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return os.path.join(work, name + (".chrome_trace" if data == "trace" else ".hatchet"))


shots = [("flame", page_for("tree", example("a", "tree")), "kscopeReport.search('layer')"),
         ("timeline", page_for("trace", example("t", "trace")), "kscopeReport.show('timeline')"),
         ("top", page_for("top", os.path.join(ROOT, "test/data/proton/rich_tree.hatchet")),
          "kscopeReport.show('top')"),
         ("diff", page_for("diff", example("b", "tree"), example("c", "tree")), "kscopeReport.show('diff')")]
browser = cdp.Browser(cdp.find_chromium())
try:
    page = browser.open_page()
    page.send("Emulation.setDeviceMetricsOverride",
              {"width": 1000, "height": 420, "deviceScaleFactor": 1, "mobile": False})
    for name, url, action in shots:
        page.goto(url)
        page.eval(action)
        page.screenshot(os.path.join(ROOT, "docs", "img", f"report-{name}.png"))
finally:
    browser.close()
