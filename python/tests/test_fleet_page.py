"""The fleet page in headless Chromium (test/browser/cdp.py): it loads
without an error or a request, the heat map shows the straggler's column
and the imbalance's row, the tables hold the summary, the tabs switch.
Skipped where chromium is not installed (tools/setup-deps.sh installs it)."""
import os
import sys
import time

import pytest

from fleet_util import REPO, export, fleet, gen_ranks, need_fleet, ok

sys.path.insert(0, str(REPO / "test" / "browser"))
import cdp  # noqa: E402


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    need_fleet()
    exe = cdp.find_chromium()
    if not exe:
        pytest.skip("no chromium (apt-get install chromium)")
    root = tmp_path_factory.mktemp("page")
    gen_ranks.write_ranks(root / "prof", 48, 120, straggler=17, slow=1.8)
    export(root / "ds", root / "prof")
    ok(fleet("report", "--html", root / "f.html", root / "ds"))
    preload = os.environ.pop("LD_PRELOAD", None)  # the sanitized pass's ASan: not for chromium
    try:
        b = cdp.Browser(exe)
    finally:
        if preload is not None:
            os.environ["LD_PRELOAD"] = preload
    try:
        p = b.open_page()
        p.send("Page.navigate", {"url": (root / "f.html").as_uri()})
        deadline = time.time() + 30
        while not p.eval("!!(window.kscopeFleet && kscopeFleet.state.ready)"):
            assert time.time() < deadline, "the fleet page did not become ready: " + repr(p.problems())
            time.sleep(0.05)
        yield p
    finally:
        b.close()


def test_loads_clean_and_ready(page):
    assert page.eval("window.kscopeFleet.state.ready") is True
    assert page.problems() == []


def test_heat_map_shows_the_straggler_and_the_imbalance(page):
    geo = page.eval("JSON.stringify(kscopeFleet.state.geometry)")
    assert geo
    # the straggler's cells are red in every step scope's row; data_load
    # goes from blue (rank 0) to red (rank 47)
    rows = page.eval("kscopeFleet.state.cells.scopes.map(s => s.name)")
    step = rows.index("train > step")
    load = rows.index("data_load")
    px = page.eval(f"""(() => {{
      const c = document.getElementById('heat-canvas'), g = c.getContext('2d');
      const s = kscopeFleet.state, d = window.devicePixelRatio || 1;
      const img = g.getImageData(0, 0, c.width, c.height);  /* one readback */
      const at = (bin, row) => {{
        const x = Math.floor((260 + (bin + 0.5) * s.geometry.cw) * d), y = Math.floor((18 + row * 16 + 8) * d);
        return Array.from(img.data.slice(4 * (y * c.width + x), 4 * (y * c.width + x) + 4));
      }};
      return {{slow: at(17, {step}), other: at(3, {step}), first: at(0, {load}), last: at(47, {load})}};
    }})()""")
    red = lambda p: p[0] > 200 and p[2] < 160  # noqa: E731
    blue = lambda p: p[2] > 200 and p[0] < 160  # noqa: E731
    assert red(px["slow"]) and not red(px["other"]), px
    assert blue(px["first"]) and red(px["last"]), px
    cell = page.eval(f"""(() => {{ const s = kscopeFleet.state;
      return kscopeFleet.cellAt(260 + 17.5 * s.geometry.cw, 18 + {step} * 16 + 8); }})()""")
    assert cell["rank"] == 17 and cell["scope"] == "train > step"


def test_tables_and_tabs(page):
    page.eval("kscopeFleet.show('view-stragglers')")
    first = page.eval("Array.from(document.querySelectorAll('#stragglers-table tbody tr')[0].cells)"
                      ".map(c => c.textContent)")
    assert first[0] == "17" and first[-1].startswith("train > step")
    assert page.eval("document.getElementById('view-stragglers').classList.contains('on')")
    assert not page.eval("document.getElementById('view-heat').classList.contains('on')")
    top = page.eval("document.querySelector('#imbalance-table tbody td.name').textContent")
    assert top == "data_load"
    n = page.eval("document.querySelectorAll('#comm-table tbody tr').length")
    assert n == 48
    page.eval("document.querySelector('#kernels-table th').click()")  # sort by time, then back
    assert page.eval("document.querySelector('#kernels-table th').classList.contains('sorted')")
    page.eval("kscopeFleet.show('view-heat')")
    assert page.problems() == []
