"""flags.py - process-wide switches of the Python package."""


class _Flags:
    # Set by the `python -m kscope` launcher: start()/finalize() in the
    # profiled program then act on the launcher's session only.
    command_line = False
    command_line_session = None


flags = _Flags()


def is_command_line():
    return flags.command_line
