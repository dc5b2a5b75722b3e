"""Whether anything under a few folders changed since a moment, told by `stat` alone.

`TreeStamp(roots, files)` stats each root (there or not), every folder below them (hidden ones
left out, as the files in them are) and each of `files`. `changed()` stats the same paths again:
a file edited, added, removed or renamed changes its folder's or its own modification time,
size or inode, and a folder created where there was none appears. Nothing is walked or read
again, so a caller that reads many files (the agent definitions before every request) does so
only when something changed.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path

Stat = tuple[int, int, int] | None


class TreeStamp:
    def __init__(self, roots: Sequence[Path], files: Iterable[Path]) -> None:
        """Taken before the files are read, so a change made while they are is seen next time."""
        files = list(files)
        watched = [*roots, *_folders_below(roots), *(path.parent for path in files), *files]
        self._paths = tuple(dict.fromkeys(watched))
        self._stats = _stats(self._paths)

    def changed(self) -> bool:
        return _stats(self._paths) != self._stats


def _folders_below(roots: Sequence[Path]) -> Iterable[Path]:
    for root in roots:
        for folder, subfolders, _ in os.walk(root):
            subfolders[:] = sorted(name for name in subfolders if not name.startswith("."))
            yield Path(folder)


def _stats(paths: Sequence[Path]) -> tuple[Stat, ...]:
    return tuple(_stat(path) for path in paths)


def _stat(path: Path) -> Stat:
    try:
        status = os.stat(path)
    except OSError:  # not there (yet), or not readable
        return None
    return status.st_mtime_ns, status.st_size, status.st_ino
