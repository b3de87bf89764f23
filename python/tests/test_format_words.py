"""Docstrings that name formats take them from the format table
(_kscope.formats(), src/format/format.h), so a format added to the table
shows in each: finalize()'s output formats, the oneshot summary's files."""
import re

from kscope import _kscope, oneshot, sessions


def words(text):
    return re.sub(r"\s+", " ", text)


def listed(items):
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " or " + items[-1]


def test_finalize_names_every_format_and_the_defaults():
    table = _kscope.formats()
    doc = words(sessions.finalize.__doc__)
    assert "(" + listed([name for name, _, _ in table]) + ")" in doc, doc
    tree = next(name for name, kind, _ in table if kind == "tree")
    trace = next(name for name, kind, _ in table if kind == "trace")
    assert "(tree: %s, trace: %s)" % (tree, trace) in doc, doc


def test_oneshot_summary_names_every_extension():
    doc = words(oneshot.render_nsys_kernel_summary.__doc__)
    assert "(" + listed([exts[0] for _, _, exts in _kscope.formats()]) + ":" in doc, doc
