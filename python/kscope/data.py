"""data.py - a live session's data without writing a file (Proton's
proton.data).

A session's data is cut into phases (numbered from 0; the current one is
live): advance_phase() completes the current phase and starts the next,
is_phase_complete() says whether a phase's GPU records have all arrived,
clear() drops phases. get(session, phase=0) parses a phase's tree
(.hatchet JSON) into Python lists and dicts (a list that also reads as
the file's text, for Triton 3.6's viewer); get_msgpack() returns it as
MessagePack bytes (.hatchet_msgpack); get_trace() parses a data="trace"
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


def _data(session, phase, fmt):
    return _kscope.data(session, fmt, phase)


class Tree(list):
    """What get() returns: the list [ROOT node, device info], as Proton's
    data.get returns it (json.loads of the .hatchet text). It also reads
    like a file holding that text (read()), because Triton 3.6's
    `viewer.get_raw_metrics` json.load()s a file where later viewers take
    the data itself: Proton's test_get_data hands it the data."""

    __slots__ = ()

    def read(self, size=-1):
        """The tree as .hatchet JSON text (all of it; size is ignored)."""
        return json.dumps(self)


def get(session=0, phase=0):
    """Phase `phase` of the session's tree: [ROOT node, device info], as a
    .hatchet holds (a Tree: a list). RuntimeError when the phase was
    cleared."""
    session = _session(session)
    if session is None:
        return None
    return Tree(json.loads(_data(session, phase, "hatchet")))


def get_msgpack(session=0, phase=0):
    """Phase `phase` of the session's tree as .hatchet_msgpack bytes."""
    session = _session(session)
    if session is None:
        return None
    return _data(session, phase, "hatchet_msgpack")


def get_trace(session=0, phase=0):
    """Phase `phase` of the session's timeline as a Chrome trace dict."""
    session = _session(session)
    if session is None:
        return None
    return json.loads(_data(session, phase, "chrome_trace"))


def advance_phase(session=0):
    """Complete the current phase (waiting for the GPU records of the work
    launched so far) and start the next; returns the new phase's number.
    In periodic flushing mode the completed phase is written to
    <name>.part_<N>.<ext> at once."""
    session = _session(session)
    if session is None:
        return None
    return _kscope.advance_phase(session)


def is_phase_complete(session=0, phase=0):
    """Whether every GPU record of phase `phase` has arrived (a completed
    phase, not cleared); the current phase never is."""
    session = _session(session)
    if session is None:
        return False
    return _kscope.phase_complete(session, phase)


is_phase_flushed = is_phase_complete  # Proton's earlier name


def clear(session=0, phase=0, clear_up_to_phase=False):
    """Drop the data of phase `phase` (with clear_up_to_phase, of every
    phase up to it). A cleared current phase goes on recording from empty."""
    session = _session(session)
    if session is None:
        return
    _kscope.clear_phase(session, phase, bool(clear_up_to_phase))
