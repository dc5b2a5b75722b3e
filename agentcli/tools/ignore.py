"""Which files a search skips: version-control folders and what git ignores.

The rules are ripgrep's defaults (so Grep's ripgrep and Python paths agree): `.gitignore`
files apply only inside a git repository, from the file's folder up to the repository
root (a nested repository starts afresh); the deepest file that mentions a path decides;
`.git/info/exclude` comes after every `.gitignore`. Hidden files are searched. Symlinks
are not followed. An ignore file that is a FIFO or device is skipped (and reported), never
opened blocking.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from agentcli.regular_file import NotRegularFile, kind_of, read_regular_file
from agentcli.tools.globs import GitPatternList

VCS_DIRS = frozenset({".git", ".hg", ".svn", ".bzr", ".jj", ".sl"})
MAX_IGNORE_FILE_BYTES = 4 << 20


@dataclass(frozen=True)
class _Level:
    """One folder's rules: `prefix` is its path plus `/`, so `rel = path[len(prefix):]`."""

    prefix: str
    gitignore: GitPatternList | None
    exclude: GitPatternList | None


class IgnoreRules:
    """Answers "is this path ignored?" for paths on disk; caches each folder's rules.

    An ignore file that is not a regular file (a FIFO would block a plain open forever) is
    not read; `notices` names each one, for the tool's result.
    """

    def __init__(self) -> None:
        self._chains: dict[str, list[_Level]] = {}
        self._lock = threading.Lock()
        self._skipped: dict[str, str] = {}
        """Path of an ignore file that is not a regular file → what it is."""

    def notices(self, cwd: str) -> list[str]:
        """One line per ignore file skipped so far (paths relative to `cwd` when inside it)."""
        with self._lock:
            skipped = sorted(self._skipped.items())
        return [
            f"Skipped {_relative(path, cwd)}: it is {kind}, not a regular file, so its ignore rules were not applied."
            for path, kind in skipped
        ]

    def ignored(self, path: str, is_dir: bool) -> bool:
        """`path` is absolute and normalised (no symlink resolution is done here)."""
        chain = self._chain(os.path.dirname(path))
        if not chain:
            return False
        for level in chain:
            if level.gitignore is not None:
                verdict = level.gitignore.match(path[len(level.prefix) :], is_dir)
                if verdict is not None:
                    return verdict
        for level in chain:
            if level.exclude is not None:
                verdict = level.exclude.match(path[len(level.prefix) :], is_dir)
                if verdict is not None:
                    return verdict
        return False

    def ignored_below(self, path: str, root: str, is_dir: bool = False) -> bool:
        """Whether `path`, or a folder between `root` (not itself judged) and it, is ignored."""
        if self.ignored(path, is_dir):
            return True
        folder = os.path.dirname(path)
        while len(folder) > len(root) and folder.startswith(root):
            if os.path.basename(folder) in VCS_DIRS or self.ignored(folder, True):
                return True
            folder = os.path.dirname(folder)
        return False

    def _chain(self, folder: str) -> list[_Level]:
        """Levels that apply to entries of `folder`, deepest first, up to the repository root."""
        chain = self._chains.get(folder)
        if chain is not None:
            return chain
        has_git = os.path.exists(os.path.join(folder, ".git"))
        level = _Level(
            folder.rstrip("/") + "/",
            self._read_patterns(os.path.join(folder, ".gitignore")),
            self._read_patterns(os.path.join(folder, ".git", "info", "exclude")) if has_git else None,
        )
        parent = os.path.dirname(folder)
        if has_git:
            chain = [level]
        elif parent == folder:
            chain = []  # reached / without finding a repository: .gitignore does not apply
        else:
            above = self._chain(parent)
            chain = [level, *above] if above else []
        with self._lock:
            self._chains[folder] = chain
        return chain

    def _read_patterns(self, path: str) -> GitPatternList | None:
        try:
            text = read_regular_file(path, MAX_IGNORE_FILE_BYTES).decode("utf-8", errors="replace")
        except NotRegularFile as error:
            with self._lock:
                self._skipped[path] = kind_of(error.mode)
            return None
        except OSError:
            return None
        patterns = GitPatternList(text.splitlines())
        return patterns or None


def _relative(path: str, cwd: str) -> str:
    rel = os.path.relpath(path, cwd)
    return path if rel == ".." or rel.startswith("../") else rel


def walk_files(
    root: str,
    rules: IgnoreRules,
    *,
    skip_dir: Callable[[str], bool] | None = None,
    max_depth: int | None = None,
    cancelled: Callable[[], bool] | None = None,
) -> Iterator[tuple[str, str]]:
    """Yield (absolute path, path relative to `root`) for every searchable regular file.

    `root` is a folder; it is searched even if it is ignored itself. `skip_dir(rel)` prunes
    more folders; `max_depth` limits how many path components deep files may be.
    """
    stack: list[tuple[str, str, int]] = [(root, "", 1)]
    while stack:
        if cancelled is not None and cancelled():
            return
        folder, rel_folder, depth = stack.pop()
        try:
            with os.scandir(folder) as entries:
                listing = list(entries)
        except OSError:
            continue
        for entry in listing:
            rel = rel_folder + entry.name
            try:
                if entry.name in VCS_DIRS or entry.is_symlink():
                    continue
                if entry.is_dir():
                    if max_depth is not None and depth >= max_depth:
                        continue
                    if rules.ignored(entry.path, True) or (skip_dir is not None and skip_dir(rel)):
                        continue
                    stack.append((entry.path, rel + "/", depth + 1))
                elif entry.is_file() and not rules.ignored(entry.path, False):
                    yield entry.path, rel
            except OSError:
                continue
