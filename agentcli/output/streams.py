"""Standard streams that may be closed, full, or read by a program that went away.

- `guard_standard_streams()` runs first thing: a closed stdin, stdout or stderr gets
  /dev/null in its place, so no file agentcli opens later can land on descriptor 0-2 (and
  receive output meant for the terminal). It says whether stdout was open.
- `write_out()` writes to stdout, raising `OutputClosed` when that fails; `write_err()`
  writes a line to stderr and shrugs off a failure (there is nowhere left to report it).
  Either way the failed stream is pointed at /dev/null, so the interpreter's last flush at
  exit neither prints "Exception ignored" nor turns the exit code into 120.
"""

from __future__ import annotations

import contextlib
import os
import sys
from typing import TextIO

from agentcli.errors import OutputClosed

STDOUT_CLOSED = (
    "Standard output is closed, so there is nowhere to show the answer. "
    "Run agentcli with stdout open, e.g. redirected to a file."
)


def guard_standard_streams() -> bool:
    """Put /dev/null on each closed standard descriptor; False when stdout was one of them."""
    closed = [fd for fd in (0, 1, 2) if not _is_open(fd)]
    for fd in closed:
        null = os.open(os.devnull, os.O_RDWR)  # the lowest free descriptor, so normally `fd` itself
        if null != fd:
            os.dup2(null, fd)
            os.close(null)
    # Python leaves None for a stream whose descriptor was closed when it started.
    if sys.stdin is None:
        sys.stdin = open(0, closefd=False)  # noqa: SIM115 (open for the life of the process)
    if sys.stdout is None:
        sys.stdout = open(1, "w", closefd=False)  # noqa: SIM115
    if sys.stderr is None:
        sys.stderr = open(2, "w", closefd=False)  # noqa: SIM115
    return 1 not in closed


def _is_open(fd: int) -> bool:
    try:
        os.fstat(fd)
    except OSError:
        return False
    return True


def write_out(out: TextIO, text: str) -> None:
    """Write and flush `text`; OutputClosed when the stream cannot take it."""
    try:
        out.write(text)
        out.flush()
    except OSError as error:
        silence(out)
        raise OutputClosed(error) from None


def write_err(err: TextIO, line: str) -> None:
    """One line on stderr, if stderr can still take it."""
    try:
        err.write(line + "\n")
        err.flush()
    except OSError:
        silence(err)


def silence(stream: TextIO) -> None:
    """Point the descriptor under `stream` at /dev/null (what is still buffered goes there too)."""
    with contextlib.suppress(OSError, ValueError):  # a stream without a descriptor (tests) stays as it is
        fd = stream.fileno()
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, fd)
        os.close(null)
