"""Linux inotify through ctypes: an instance, its watches, its events; and which file systems it sees fully.

Only what the watcher (`checkpoints.watcher`) needs. Every call raises OSError with the kernel's
errno (ENOSPC from `add_watch`: the user's watch limit, `fs.inotify.max_user_watches`; EMFILE from
`Inotify()`: the instance limit). `Unavailable` when there is no inotify (not Linux, no libc).

inotify reports changes made through the kernel on this machine: writes by any process, in
any mount namespace (a bubblewrap sandbox binds the same folders, so the same inodes). It does
not see changes a network file system's other clients make, nor writes through a shared `mmap`
(only the `close` after them): `local_file_system` says which file systems are trusted.
"""

from __future__ import annotations

import ctypes
import errno
import functools
import os
import struct
import sys
from collections.abc import Iterator
from dataclasses import dataclass

MODIFY = 0x2
ATTRIB = 0x4
CLOSE_WRITE = 0x8
MOVED_FROM = 0x40
MOVED_TO = 0x80
CREATE = 0x100
DELETE = 0x200
DELETE_SELF = 0x400
MOVE_SELF = 0x800
UNMOUNT = 0x2000
Q_OVERFLOW = 0x4000
IGNORED = 0x8000
ONLYDIR = 0x01000000
DONT_FOLLOW = 0x02000000
ISDIR = 0x40000000

FOLDER_MASK = MODIFY | ATTRIB | CLOSE_WRITE | MOVED_FROM | MOVED_TO | CREATE | DELETE
FOLDER_MASK |= DELETE_SELF | MOVE_SELF | ONLYDIR | DONT_FOLLOW
"""What a watched folder reports: every change of an entry in it, and of itself."""

_HEADER = struct.Struct("iIII")
_READ_BYTES = 65_536

LOCAL_FILE_SYSTEMS = {
    0xEF53: "ext2/3/4",
    0x58465342: "xfs",
    0x9123683E: "btrfs",
    0x01021994: "tmpfs",
    0x858458F6: "ramfs",
    0x794C7630: "overlayfs",
    0xF2F52010: "f2fs",
    0x2FC12FC1: "zfs",
    0xCA451A4E: "bcachefs",
}
"""File systems (statfs magic numbers) whose every change goes through this kernel: no network or FUSE one."""


class Unavailable(Exception):
    """No inotify here (not Linux, or no C library to call it through)."""


@dataclass(frozen=True)
class Event:
    wd: int
    mask: int
    cookie: int
    name: bytes


@functools.cache
def _libc() -> ctypes.CDLL:
    if not sys.platform.startswith("linux"):
        raise Unavailable(f"inotify is Linux's ({sys.platform} has none)")
    try:
        return ctypes.CDLL(None, use_errno=True)  # the C library Python runs on (find_library starts ldconfig)
    except OSError as error:
        raise Unavailable(f"no C library ({error})") from None


class Inotify:
    """One inotify instance (non-blocking, closed on exec)."""

    def __init__(self) -> None:
        self._libc = _libc()
        fd = self._libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
        if fd < 0:
            raise _error("inotify_init1")
        self.fd: int = fd

    def add_watch(self, path: bytes, mask: int = FOLDER_MASK) -> int:
        """Watch the folder `path` (its watch descriptor: the same for the same folder)."""
        wd = self._libc.inotify_add_watch(self.fd, path, ctypes.c_uint32(mask))
        if wd < 0:
            raise _error("inotify_add_watch", path)
        return int(wd)

    def remove_watch(self, wd: int) -> None:
        self._libc.inotify_rm_watch(self.fd, wd)  # fails only for a watch the kernel already dropped

    def read(self) -> Iterator[Event]:
        """The events queued now (none when there are none: never blocks)."""
        try:
            data = os.read(self.fd, _READ_BYTES)
        except BlockingIOError:
            return
        offset = 0
        while offset + _HEADER.size <= len(data):
            wd, mask, cookie, length = _HEADER.unpack_from(data, offset)
            start = offset + _HEADER.size
            yield Event(wd, mask, cookie, data[start : start + length].rstrip(b"\0"))
            offset = start + length

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


def file_system(path: bytes) -> int:
    """The statfs magic number of the file system holding `path`."""
    buffer = ctypes.create_string_buffer(512)  # struct statfs is 120 bytes on 64-bit Linux
    if _libc().statfs(path, buffer) != 0:
        raise _error("statfs", path)
    return ctypes.c_long.from_buffer(buffer).value & 0xFFFFFFFF


def _error(call: str, path: bytes = b"") -> OSError:
    number = ctypes.get_errno() or errno.EIO
    return OSError(number, f"{call}: {os.strerror(number)}", os.fsdecode(path) if path else None)
