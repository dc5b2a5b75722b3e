"""Grep's search, engine-neutral: the query, the hits, which files count, and the pure-Python engine.

`agentcli.tools.ripgrep` is the fast engine; both produce `Results` for the same query and
tree, and both pass through `FileFilter`, so Grep answers the same with or without ripgrep.
"""

from __future__ import annotations

import bisect
import os
import re
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Literal, Protocol

from agentcli.regular_file import read_regular_file
from agentcli.tools.globs import NameGlobs, PathFilter
from agentcli.tools.ignore import VCS_DIRS, IgnoreRules, walk_files
from agentcli.tools.textfile import bom_encoding

Mode = Literal["files_with_matches", "content", "count"]
BINARY_WINDOW = 64 * 1024
"""ripgrep's rule: a NUL in the first 64 KiB makes a file binary (skipped); a later NUL ends the search."""
_PREFILTER_UNSAFE = re.compile(r"\\[AZz]|\(\?<?!|\(\?>|[*+?}]\+")
MAX_COLUMNS = 500
"""Characters of a line content mode shows; the rest is a note saying how many (`clipped`)."""


@dataclass(frozen=True)
class SearchQuery:
    pattern: str
    root: str
    """Absolute path of the folder or file to search."""
    root_is_file: bool
    mode: Mode
    ignore_case: bool = False
    multiline: bool = False
    before: int = 0
    after: int = 0
    glob: str | None = None
    type_globs: tuple[str, ...] | None = None


class Hits(Protocol):
    """One file's lines, however an engine holds them."""

    @property
    def matched_count(self) -> int:
        """Lines a match touches."""

    @property
    def line_count(self) -> int:
        """Lines content mode shows: matched and context lines."""

    def lines(self) -> Iterator[tuple[int, bool, str]]:
        """(line number, whether a match touches it, text) in line order; the text `clipped`."""


class Results(Protocol):
    """What an engine found: the files in no particular order, each looked at only if shown."""

    @property
    def paths(self) -> Sequence[str]:
        """Absolute path of each file with a match."""

    @property
    def matched_lines(self) -> int:
        """Lines a match touches, over all files (0 in files_with_matches mode)."""

    @property
    def line_count(self) -> int:
        """Lines content mode shows (matched and context), over all files."""

    def mtimes(self) -> Sequence[int]:
        """Each file's mtime in nanoseconds (0 if it is gone), in the order of `paths`."""

    def hits(self, index: int) -> Hits:
        """The lines of the file at `paths[index]`."""


@dataclass
class FileHits:
    path: str
    """Absolute path."""
    matched: dict[int, str] = field(default_factory=dict)
    """Line number → text of every line a match touches (content and count modes)."""
    context: dict[int, str] = field(default_factory=dict)
    """Line number → text of context lines (content mode with -A/-B/-C)."""

    @property
    def matched_count(self) -> int:
        return len(self.matched)

    @property
    def line_count(self) -> int:
        return len(self.matched) + len(self.context)

    def lines(self) -> Iterator[tuple[int, bool, str]]:
        for number in sorted(self.matched.keys() | self.context.keys()):
            matched = number in self.matched
            yield number, matched, clipped(self.matched[number] if matched else self.context[number])


def clipped(text: str, length: int | None = None) -> str:
    """`text` cut at MAX_COLUMNS characters, with a note of how many more the line has; `length`:
    the line's, when `text` is only its start."""
    length = len(text) if length is None else length
    if length <= MAX_COLUMNS:
        return text
    return text[:MAX_COLUMNS] + f" [... {length - MAX_COLUMNS:,} more characters]"


class HitList:
    """Results held file by file: the Python engine's, and ripgrep's once filtered file by file."""

    def __init__(self, paths: Sequence[str], hits: Sequence[Hits]) -> None:
        self.paths = paths
        self._hits = hits
        self.matched_lines = sum(h.matched_count for h in hits)
        self.line_count = sum(h.line_count for h in hits)

    def mtimes(self) -> list[int]:
        return [modified_ns(path) for path in self.paths]

    def hits(self, index: int) -> Hits:
        return self._hits[index]


def modified_ns(path: str) -> int:
    """The file's mtime (0 if it is gone): files_with_matches lists newest first."""
    try:
        return os.stat(path).st_mtime_ns
    except OSError:
        return 0


class FileFilter:
    """The files a query may report: not ignored, not under .git, passing `glob` and `type`."""

    def __init__(self, query: SearchQuery) -> None:
        self.query = query
        self.rules = IgnoreRules()
        self.globs = PathFilter(query.glob) if query.glob else None
        self.types = NameGlobs(query.type_globs) if query.type_globs else None
        self.base = os.path.dirname(query.root) if query.root_is_file else query.root
        self._folders: dict[str, bool] = {}

    def wants_dir(self, rel: str) -> bool:
        return self.globs is None or not self.globs.excludes_dir(rel)

    def wants_file(self, rel: str) -> bool:
        if self.types is not None and not self.types.matches(rel.rsplit("/", 1)[-1]):
            return False
        return self.globs is None or self.globs.accepts_file(rel)

    def accepts(self, path: str) -> bool:
        """For results found by another engine: the same decision the Python walk makes."""
        rel = path[len(self.base) + 1 :] if path.startswith(self.base + "/") else os.path.relpath(path, self.base)
        if not self.wants_file(rel):
            return False
        if self.query.root_is_file:
            return True
        folder, _, _ = rel.rpartition("/")
        return not self._folder_skipped(folder) and not self.rules.ignored(path, False)

    def _folder_skipped(self, rel: str) -> bool:
        """Whether the walk would skip folder `rel` (relative to the root) or one above it."""
        if not rel:
            return False
        skipped = self._folders.get(rel)
        if skipped is None:
            parent, _, name = rel.rpartition("/")
            skipped = (
                self._folder_skipped(parent)
                or name in VCS_DIRS
                or not self.wants_dir(rel)
                or self.rules.ignored(os.path.join(self.base, rel), True)
            )
            self._folders[rel] = skipped
        return skipped

    def candidates(self, cancelled: threading.Event) -> list[tuple[str, str]]:
        if self.query.root_is_file:
            name = os.path.basename(self.query.root)
            return [(self.query.root, name)] if self.wants_file(name) else []
        files = walk_files(
            self.base, self.rules, skip_dir=lambda rel: not self.wants_dir(rel), cancelled=cancelled.is_set
        )
        return [(path, rel) for path, rel in files if self.wants_file(rel)]


def compile_pattern(query: SearchQuery) -> re.Pattern[str]:
    """Python's reading of the pattern; raises re.error for an invalid one."""
    flags = re.MULTILINE
    if query.ignore_case:
        flags |= re.IGNORECASE
    if query.multiline:
        flags |= re.DOTALL
    return re.compile(query.pattern, flags)


_ONE_AT_A_TIME = threading.Lock()
"""Python searches are CPU-bound under the GIL: run concurrently they only slow each other down."""


def python_search(query: SearchQuery, regex: re.Pattern[str], cancelled: threading.Event, files: FileFilter) -> HitList:
    """The fallback engine: walk the tree (ignore rules as ripgrep applies them) and match in Python."""
    while not _ONE_AT_A_TIME.acquire(timeout=0.05):
        if cancelled.is_set():
            return HitList([], [])
    try:
        hits = _python_search(query, regex, cancelled, files)
        return HitList([h.path for h in hits], hits)
    finally:
        _ONE_AT_A_TIME.release()


def _python_search(
    query: SearchQuery, regex: re.Pattern[str], cancelled: threading.Event, files: FileFilter
) -> list[FileHits]:
    hits: list[FileHits] = []
    prefilter = not query.multiline and not _PREFILTER_UNSAFE.search(query.pattern)
    for path, _ in files.candidates(cancelled):
        if cancelled.is_set():
            break
        text = _read_text(path)
        if text is None or (prefilter and regex.search(text) is None):
            continue
        found = _match_lines(text, regex, query)
        if found is not None:
            found.path = path
            hits.append(found)
    return hits


def skipped_as_binary(path: str) -> bool:
    """Whether the search skips this file as binary (for engines that would not, on their own)."""
    try:
        head = read_regular_file(path, BINARY_WINDOW)
    except OSError:
        return False  # the engine reports what is wrong with it
    return _binary(head)


def _binary(data: bytes) -> bool:
    return bom_encoding(data[:4]) is None and data.find(b"\0", 0, BINARY_WINDOW) != -1


def _read_text(path: str) -> str | None:
    try:
        data = read_regular_file(path, None)  # a file swapped for a FIFO since the walk is skipped, not waited on
    except OSError:
        return None
    if _binary(data):
        return None
    encoding = bom_encoding(data[:4])
    if encoding is not None:
        return data.decode(encoding, errors="replace")
    nul = data.find(b"\0")
    if nul != -1:  # past the binary window: what comes before the NUL's line is searched
        data = data[: data.rfind(b"\n", 0, nul) + 1]
    return data.decode("utf-8", errors="replace")


def _match_lines(text: str, regex: re.Pattern[str], query: SearchQuery) -> FileHits | None:
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    if query.multiline:
        numbers = _multiline_numbers(text, regex, len(lines))
    elif query.mode == "files_with_matches":
        numbers = next(([i] for i, line in enumerate(lines) if regex.search(line)), [])
    else:
        numbers = [i for i, line in enumerate(lines) if regex.search(line)]
    if not numbers:
        return None
    hits = FileHits("")
    if query.mode == "files_with_matches":
        return hits
    for i in numbers:
        hits.matched[i + 1] = _display(lines[i])
    if query.mode == "content" and (query.before or query.after):
        for i in numbers:
            for j in range(max(0, i - query.before), min(len(lines), i + query.after + 1)):
                if j + 1 not in hits.matched:
                    hits.context[j + 1] = _display(lines[j])
    return hits


def _multiline_numbers(text: str, regex: re.Pattern[str], line_count: int) -> list[int]:
    starts = [0, *(newline.end() for newline in re.finditer("\n", text))]
    touched: set[int] = set()
    for match in regex.finditer(text):
        start, end = match.span()
        first = bisect.bisect_right(starts, start) - 1
        if first >= line_count:
            continue  # an empty match after the final newline is on no line
        last = bisect.bisect_right(starts, max(start, end - 1)) - 1
        touched.update(range(first, min(last, line_count - 1) + 1))
    return sorted(touched)


def _display(line: str) -> str:
    return line[:-1] if line.endswith("\r") else line
