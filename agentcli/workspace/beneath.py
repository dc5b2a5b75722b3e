"""Opening the path the permission gate checked, without following a symlink anywhere on the way.

The local workspace's files (`local.LocalWorkspace.read_file` and `open_folder`). The gate
judges a call's real path: `..` and every symlink resolved once, at the check
(`ToolContext.real_path` hands that path to the tool). Read, Write and Edit then reach it here
one component at a time from `/`, each folder opened relative to the one before with
O_NOFOLLOW, and the file itself opened in the last folder's handle with O_NOFOLLOW. A
component swapped for a symlink after the check is refused (`PathChanged`, a WorkspaceError
saying nothing was read or written), never followed, so the object used is the object that
was judged. A symlink in the project that points into the project still works: the gate
resolved it, and what is walked here is its target.

Write's missing folders are created with mkdir in the same chain of handles, and a
replacement is written to a temporary file in the target's own folder handle (created with
O_EXCL|O_NOFOLLOW), fsynced, given the old file's mode (or a new file's), and renamed over the
target there.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from agentcli.regular_file import read_at_most, require_regular
from agentcli.workspace.contract import Snapshot, Verb, WorkspaceError

_FOLDER_FLAGS = os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC | getattr(os, "O_PATH", os.O_RDONLY)
"""O_PATH (Linux): a handle to walk through, which needs no read permission on the folder."""
_SYMLINK_ERRNOS = {errno.ELOOP, errno.EMLINK}
"""What open(O_NOFOLLOW) of a symlink fails with (EMLINK on FreeBSD)."""
MAX_TEMP_PREFIX = 200
"""Characters of the target's name kept in the temporary file's name (names are at most 255 bytes)."""


class PathChanged(WorkspaceError):
    """A component of a checked path is now a symlink: the call stopped before touching anything."""

    def __init__(self, component: Path, verb: Verb) -> None:
        super().__init__(
            f"{component} changed after permission was checked: it is now a symlink, which is not followed; "
            f"nothing was {verb}. If the change is expected, call the tool again so the new path is checked."
        )


@dataclass(frozen=True)
class Folder:
    """An open handle on a checked folder; names in it are opened without following symlinks."""

    fd: int
    path: Path
    """The folder's real path, for messages."""
    verb: Verb

    def open(self, name: str, flags: int, mode: int = 0o666) -> int:
        """os.open of `name` in this folder with O_NOFOLLOW; a symlink there raises PathChanged."""
        try:
            return os.open(name, flags | os.O_NOFOLLOW | os.O_CLOEXEC, mode, dir_fd=self.fd)
        except OSError as error:
            raise self._explain(error, name) from None

    def read(self, name: str) -> Snapshot | None:
        """The regular file `name` as it is now, or None when there is none.

        Raises NotRegularFile (an OSError) for a folder, FIFO, socket or device: none is read.
        """
        try:
            fd = self.open(name, os.O_RDONLY | os.O_NONBLOCK)
        except FileNotFoundError:
            return None
        try:
            info = require_regular(fd, self.path / name)
            return Snapshot(info, read_at_most(fd))
        finally:
            os.close(fd)

    def replace(self, name: str, data: bytes, mode: int | None) -> os.stat_result:
        """Atomically make `name` hold `data` with permission bits `mode` (None: a new file's
        default, `new_file_mode`); returns the new file's fstat."""
        if mode is None:
            mode = new_file_mode()
        prefix = f".{name[:MAX_TEMP_PREFIX]}."
        temp, fd = self._create_temp(prefix)
        try:
            _write_all(fd, data)
            os.fchmod(fd, mode)
            os.fsync(fd)
            info = os.fstat(fd)
            os.rename(temp, name, src_dir_fd=self.fd, dst_dir_fd=self.fd)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temp, dir_fd=self.fd)
            raise
        finally:
            os.close(fd)
        return info

    def _create_temp(self, prefix: str) -> tuple[str, int]:
        for _ in range(100):
            temp = f"{prefix}{secrets.token_hex(4)}.tmp"
            try:
                return temp, self.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            except FileExistsError:
                continue
        raise FileExistsError(errno.EEXIST, "no free temporary file name", str(self.path / prefix))

    def _explain(self, error: OSError, name: str) -> Exception:
        """The error with the full path as its filename; PathChanged when `name` is a symlink."""
        if error.errno in _SYMLINK_ERRNOS or (error.errno == errno.ENOTDIR and self._was_symlink(name)):
            return PathChanged(self.path / name, self.verb)
        return OSError(error.errno, error.strerror, str(self.path / name))

    def _was_symlink(self, name: str) -> bool:
        """After O_DIRECTORY|O_NOFOLLOW failed with ENOTDIR: was it a symlink rather than a file?

        A symlink or a folder now means a symlink then (a folder would have opened): it is
        being swapped back and forth.
        """
        try:
            mode = os.stat(name, dir_fd=self.fd, follow_symlinks=False).st_mode
        except OSError:
            return False
        return stat.S_ISLNK(mode) or stat.S_ISDIR(mode)


def new_file_mode() -> int:
    """The permission bits a new file gets (0o666 less the umask), read without changing the umask."""
    return 0o666 & ~_umask()


@contextlib.contextmanager
def open_folder(real: Path, verb: Verb, *, create: bool = False) -> Iterator[Folder]:
    """A handle on the folder `real` (absolute, as the gate checked it), walked from `/`.

    With `create`, missing folders are made on the way; without it a missing one raises
    FileNotFoundError. A component that is a symlink raises PathChanged; one that is a file
    raises NotADirectoryError naming it.
    """
    if not real.is_absolute():
        raise ValueError(f"not an absolute path: {real}")
    folder = Folder(os.open("/", _FOLDER_FLAGS), Path("/"), verb)
    try:
        for name in real.parts[1:]:
            step = _enter(folder, name, create)
            os.close(folder.fd)
            folder = step
        yield folder
    finally:
        os.close(folder.fd)


def open_file(real: Path, flags: int, verb: Verb) -> int:
    """A descriptor for `real` itself, reached like `open_folder`'s and opened with `flags` | O_NOFOLLOW."""
    if real.parent == real:  # the root: there is no folder to walk through
        return os.open(real, flags | os.O_CLOEXEC)
    with open_folder(real.parent, verb) as folder:
        return folder.open(real.name, flags)


def _enter(folder: Folder, name: str, create: bool) -> Folder:
    try:
        fd = folder.open(name, _FOLDER_FLAGS)
    except FileNotFoundError:
        if not create:
            raise
        with contextlib.suppress(FileExistsError):  # made meanwhile by someone else: open it as it is
            os.mkdir(name, 0o777, dir_fd=folder.fd)
        fd = folder.open(name, _FOLDER_FLAGS)
    return Folder(fd, folder.path / name, folder.verb)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _umask() -> int:
    # Reading the umask without changing it (os.umask would race with other threads).
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    return 0o022
