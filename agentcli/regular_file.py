"""Reading a file that may not be one: a FIFO, socket or device is refused, never opened blocking.

The files agentcli reads on its own (`.gitignore`, CLAUDE.md and its `@` imports, skills,
settings) come from a repository that may be hostile, and a plain `open` of a FIFO waits
for a writer forever. `read_regular_file` opens with O_NONBLOCK (which never waits), checks
with fstat that it got a regular file, and reads at most a given number of bytes. Anything
else raises `NotRegularFile`, an OSError whose `strerror` says what the path is, so callers
that already report OSErrors report this one too.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

CHUNK = 1 << 20


class NotRegularFile(OSError):
    """The path is a folder, FIFO, socket or device: nothing was read from it."""

    def __init__(self, path: str | Path, mode: int) -> None:
        super().__init__(errno.EINVAL, f"it is {kind_of(mode)}, not a regular file", str(path))
        self.mode = mode
        """st_mode of what the path is."""


def kind_of(mode: int) -> str:
    """`a FIFO (named pipe)`, `a folder`, …: what a non-regular file is, for messages."""
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "a special file"


def read_regular_file(path: str | Path, limit: int | None) -> bytes:
    """At most `limit` bytes (None: all) of the regular file at `path` (symlinks followed).

    Raises NotRegularFile for anything but a regular file, and what `open` raises otherwise.
    """
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        require_regular(fd, path)
        return read_at_most(fd, limit)
    finally:
        os.close(fd)


def require_regular(fd: int, path: str | Path) -> os.stat_result:
    """fstat of `fd`, which must be a regular file; it is switched back to blocking reads."""
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        raise NotRegularFile(path, info.st_mode)
    os.set_blocking(fd, True)  # O_NONBLOCK was only for the open; some network filesystems honour it on reads
    return info


def read_at_most(fd: int, limit: int | None = None) -> bytes:
    """Read from `fd` until end of file, or `limit` bytes."""
    chunks: list[bytes] = []
    left = limit
    while left is None or left > 0:
        chunk = os.read(fd, CHUNK if left is None else min(CHUNK, left))
        if not chunk:
            break
        chunks.append(chunk)
        if left is not None:
            left -= len(chunk)
    return b"".join(chunks)
