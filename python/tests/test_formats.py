"""_kscope.formats(): the C format table (src/format/format.h) as Python
sees it, and the launcher's --format taking its choices from it."""
import os
import re

import pytest

from kscope import _kscope, launcher

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
FORMAT_H = os.path.join(REPO, "src", "format", "format.h")


def c_table():
    """[(name, kind, extensions)] of KSCOPE__FORMATS in format.h."""
    with open(FORMAT_H, encoding="utf-8") as f:
        text = f.read()
    rows = re.findall(r'X\(\s*\w+,\s*"([^"]*)",\s*KSCOPE__KIND_(TREE|TRACE),\s*"([^"]*)"', text)
    return [(name, kind.lower(), tuple(exts.split())) for name, kind, exts in rows]


def test_formats_shape():
    formats = _kscope.formats()
    assert isinstance(formats, list) and formats
    names = [f[0] for f in formats]
    assert len(set(names)) == len(names)
    for name, kind, exts in formats:
        assert isinstance(name, str) and name
        assert kind in ("tree", "trace")
        assert isinstance(exts, tuple) and exts
        assert all(isinstance(e, str) and e.startswith(".") for e in exts)
    assert {"tree", "trace"} <= {kind for _, kind, _ in formats}


def test_formats_are_the_c_table():
    if not os.path.exists(FORMAT_H):
        pytest.skip("needs the repository's C sources")
    table = c_table()
    assert table, "no format found in format.h"
    assert _kscope.formats() == table


def test_output_path_uses_the_first_extension(session):
    sid, name = session  # a tree session: its formats are those of kind "tree"
    for fmt, kind, exts in _kscope.formats():
        if kind == "tree":
            assert _kscope.output_path(sid, fmt) == name + exts[0]
        else:
            with pytest.raises(ValueError, match=fmt):
                _kscope.output_path(sid, fmt)


def test_launcher_format_choices():
    names = [f[0] for f in _kscope.formats()]
    assert launcher.format_names() == names
    for fmt in names:
        assert launcher.parse_args(["--format", fmt, "script.py"]).format == fmt


def test_launcher_rejects_unknown_format(capsys):
    with pytest.raises(SystemExit) as e:
        launcher.parse_args(["--format", "no_such_format", "script.py"])
    assert e.value.code == 2
    assert "no_such_format" in capsys.readouterr().err
