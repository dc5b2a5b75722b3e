"""Putting a project's files back as a snapshot recorded them.

`restore(repo, now, target)` takes the work tree from snapshot `now` (taken just before, under
the same lock, so nothing unrecorded is lost) to snapshot `target`: files only in `now` are
removed (and folders left empty by that), files only in `target` or different there are
written, links made again as links. Each file is reached from the project's real path one
folder at a time without following a symlink (`workspace.beneath`), so a link planted in the
project cannot redirect a write outside it; files are replaced atomically.

A path that exists on disk but is in neither snapshot (an ignored file, one over the size
limit, another repository) is never overwritten: what is there was never recorded, and would
be lost. Whatever could not be put back is returned, path by path with the reason, never
passed over in silence; the caller records the tree again to check (`Restored.not_restored`).
"""

from __future__ import annotations

import contextlib
import functools
import os
import stat
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from agentcli.checkpoints.shadow import ShadowRepo, TreeChange
from agentcli.workspace import beneath
from agentcli.workspace.contract import WorkspaceError

LINK_MODE = "120000"
EXECUTABLE_MODE = "100755"
_FORBIDDEN_PARTS = {b"", b".", b".."}


@dataclass
class Restored:
    """What a restore did."""

    changed: list[str] = field(default_factory=list)
    """Paths written or removed."""
    not_restored: list[str] = field(default_factory=list)
    """`path: why`, for each path left as it was."""


def restore(repo: ShadowRepo, now: str, target: str) -> Restored:
    """Make the work tree (recorded as `now`) what `target` recorded (under `repo.locked()`)."""
    done = Restored()
    kept = repo.left_out(target)
    for change in repo.changes(now, target):
        if change.status == "D" and change.path in kept:
            done.not_restored.append(f"{change.name}: left out of that checkpoint (see its notice), so left as it is")
    changes = [c for c in repo.changes(now, target) if not (c.status == "D" and c.path in kept)]
    removals = [c for c in changes if c.status == "D" or (c.status == "T" and c.new_mode != c.old_mode)]
    writes = [c for c in changes if c.status != "D"]
    for change in sorted(removals, key=lambda c: c.path.count(b"/"), reverse=True):
        _try(done, change, functools.partial(_remove, repo.root, change.path))
    _remove_empty_folders(repo.root, {os.path.dirname(c.path) for c in removals if c.status == "D"})
    by_blob: dict[str, list[TreeChange]] = {}
    for change in writes:
        if change.new_mode != "160000":
            by_blob.setdefault(change.new_blob, []).append(change)
    for blob, data in repo.blobs(list(by_blob)):  # one file's bytes in memory at a time
        for change in by_blob[blob]:
            _try(done, change, functools.partial(_write, repo.root, change, data))
    done.changed.sort()
    return done


def _try(done: Restored, change: TreeChange, action: Callable[[], None]) -> None:
    try:
        action()
    except _LeftAlone as why:
        done.not_restored.append(f"{change.name}: {why}")
    except (OSError, WorkspaceError) as error:
        reason = error.strerror if isinstance(error, OSError) and error.strerror else str(error)
        done.not_restored.append(f"{change.name}: {reason}")
    else:
        done.changed.append(change.name)


class _LeftAlone(Exception):
    """A path restore must not touch; the message says why."""


def _split(root: Path, path: bytes) -> tuple[Path, str]:
    """The real folder and the name of `path` (relative to `root`, as git wrote it)."""
    parts = path.split(b"/")
    if any(part in _FORBIDDEN_PARTS or part.lower() == b".git" for part in parts):
        raise _LeftAlone("not a path inside the project")
    folder = Path(os.fsdecode(os.path.join(os.fsencode(root), *parts[:-1]))) if len(parts) > 1 else root
    return folder, os.fsdecode(parts[-1])


def _remove(root: Path, path: bytes) -> None:
    folder_path, name = _split(root, path)
    try:
        with beneath.open_folder(folder_path, "written") as folder:
            info = os.stat(name, dir_fd=folder.fd, follow_symlinks=False)
            if stat.S_ISDIR(info.st_mode):
                raise _LeftAlone("it is a folder now; its files were not recorded, so it was left as it is")
            os.unlink(name, dir_fd=folder.fd)
    except FileNotFoundError:
        pass  # gone already


def _remove_empty_folders(root: Path, folders: set[bytes]) -> None:
    """Folders that held only removed files go too (deepest first, never the project itself)."""
    candidates: set[bytes] = set()
    for folder in folders:
        while folder:
            candidates.add(folder)
            folder = os.path.dirname(folder)
    for folder in sorted(candidates, key=lambda f: f.count(b"/"), reverse=True):
        with contextlib.suppress(OSError, _LeftAlone):
            parent, name = _split(root, folder)
            with beneath.open_folder(parent, "written") as handle:
                os.rmdir(name, dir_fd=handle.fd)  # fails, as it should, when anything is left in it


def _write(root: Path, change: TreeChange, data: bytes) -> None:
    folder_path, name = _split(root, change.path)
    with beneath.open_folder(folder_path, "written", create=True) as folder:
        try:
            info: os.stat_result | None = os.stat(name, dir_fd=folder.fd, follow_symlinks=False)
        except FileNotFoundError:
            info = None
        if info is not None and change.status == "A":
            raise _LeftAlone("a file not covered by checkpoints (ignored or over the size limit) is there now")
        if info is not None and stat.S_ISDIR(info.st_mode):
            raise _LeftAlone("a folder is there now")
        if change.new_mode == LINK_MODE:
            if info is not None:
                os.unlink(name, dir_fd=folder.fd)
            os.symlink(data, name, dir_fd=folder.fd)
            return
        mode = beneath.new_file_mode() if info is None or stat.S_ISLNK(info.st_mode) else stat.S_IMODE(info.st_mode)
        mode = mode | (mode & 0o444) >> 2 if change.new_mode == EXECUTABLE_MODE else mode & ~0o111
        if info is not None and stat.S_ISLNK(info.st_mode):
            os.unlink(name, dir_fd=folder.fd)  # replace() renames over it, but say plainly it goes
        folder.replace(name, data, mode)
