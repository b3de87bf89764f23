"""test_report.py - kscope.report_html writes the HTML page through the
command line, and turns its errors into ValueError."""
import os
import pathlib

import pytest

import kscope

REPO = pathlib.Path(__file__).resolve().parents[2]
CLI = os.environ.get("KSCOPE_CLI") or str(REPO / "build" / "kscope")
TREE = REPO / "test" / "data" / "proton" / "rich_tree.hatchet"

pytestmark = pytest.mark.skipif(not os.access(CLI, os.X_OK), reason=f"no kscope command at {CLI}")


@pytest.fixture(autouse=True)
def cli(monkeypatch):
    monkeypatch.setenv("KSCOPE_CLI", CLI)


def test_report_html_writes_one_page(tmp_path):
    out = tmp_path / "r.html"
    assert kscope.report_html(TREE, out) == out
    text = out.read_text()
    assert text.count("<script") == 2 and "default-src 'none'" in text


def test_report_html_diff(tmp_path):
    out = tmp_path / "d.html"
    kscope.report_html(TREE, out, other=TREE)
    assert 'id="kscope-b"' in out.read_text()


def test_report_html_bad_input(tmp_path):
    with pytest.raises(ValueError, match="missing.hatchet"):
        kscope.report_html(tmp_path / "missing.hatchet", tmp_path / "x.html")
