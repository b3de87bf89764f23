"""formats.py - the format table (src/format/format.h, as
_kscope.formats() gives it) in the words docstrings use, so a format added
to the table shows in them as it does in the command line's help texts."""
from . import _kscope


def format_list(kind=None, extensions=False):
    """The formats of `kind` ("tree", "trace"; None: all) as a list for
    people, "a", "a or b", "a, b or c": their names, or with `extensions`
    the extension each is written with."""
    items = [exts[0] if extensions else name
             for name, k, exts in _kscope.formats() if kind in (None, k)]
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " or " + items[-1]


def default_format(kind):
    """The name of the format a session of `kind` ("tree", "trace") writes
    when none is named: the table's first of that kind."""
    return next(name for name, k, _ in _kscope.formats() if k == kind)


def with_formats(fn):
    """Fill the table's words into fn's docstring: {formats},
    {tree_formats}, {trace_formats} (names), {exts} (extensions),
    {tree_default}, {trace_default} (what a session writes by default)."""
    fn.__doc__ = fn.__doc__.format(
        formats=format_list(), tree_formats=format_list("tree"),
        trace_formats=format_list("trace"), exts=format_list(extensions=True),
        tree_default=default_format("tree"), trace_default=default_format("trace"))
    return fn
