"""data.py - a live session's data without writing a file.

get(session) parses the session's tree (.hatchet JSON) into Python lists
and dicts; get_msgpack(session) returns the same tree as MessagePack
bytes (.hatchet_msgpack); get_trace(session) parses a data="trace"
session's Chrome trace. The session keeps running.
"""
import json

from . import _kscope
from .flags import flags


def _session(session):
    if session is None:
        return None
    if flags.command_line and session != flags.command_line_session:
        raise ValueError(
            f"session {session} is not the launcher's session {flags.command_line_session}"
        )
    return session


def get(session=0):
    """The session's tree: [ROOT node, device info], as a .hatchet holds."""
    session = _session(session)
    if session is None:
        return None
    return json.loads(_kscope.data(session, "hatchet"))


def get_msgpack(session=0):
    """The session's tree as .hatchet_msgpack bytes."""
    session = _session(session)
    if session is None:
        return None
    return _kscope.data(session, "hatchet_msgpack")


def get_trace(session=0):
    """The session's timeline as a Chrome trace dict."""
    session = _session(session)
    if session is None:
        return None
    return json.loads(_kscope.data(session, "chrome_trace"))
