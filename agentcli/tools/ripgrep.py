"""Grep's fast engine: run `rg` in the workspace and parse its plain output, never more of it than Grep shows.

- files_with_matches: `-l --null`, each name stat'ed as it arrives, while rg still searches.
- count: `--count --null --stats`: `./name NUL count` lines, then totals that show whether
  rg left out a file (it does when binary data follows a match); then, and for multiline
  counts, the lines below.
- content: `--heading --null -n -b`: a file's name once, ended by a NUL, then `N:OFFSET:text`
  for a matched line and `N-OFFSET-text` for a context line (OFFSET: where the line starts in
  the file, in bytes), `--` between groups, an empty line before the next file. Totals are
  counted over the whole output; only the files shown are split. rg prints only the start of a
  line longer than `MAX_COLUMNS` (`--max-columns-preview`), so a minified file's 100 MB line
  never passes through memory whole; how long the line is, for the note, is counted from the
  file at its offset, a chunk at a time.
"""

from __future__ import annotations

import codecs
import os
import re
import shutil
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import IO, Literal, TypeVar

from agentcli.regular_file import require_regular
from agentcli.tools.ignore import VCS_DIRS
from agentcli.tools.search import (
    MAX_COLUMNS,
    FileFilter,
    FileHits,
    HitList,
    Hits,
    Results,
    SearchQuery,
    clipped,
    modified_ns,
    skipped_as_binary,
)
from agentcli.workspace.contract import Command, Process, Workspace

T = TypeVar("T")
DISABLE_ENV = "AGENTCLI_NO_RIPGREP"
"""Set to 1 to make Grep use the pure-Python engine even when rg is installed."""


class PatternRejected(Exception):
    """ripgrep's regex engine rejected the pattern (it may still be valid Python regex)."""


class RipgrepFailed(Exception):
    """rg stopped with an error and no results (e.g. a malformed glob)."""


class RipgrepBlocked(Exception):
    """rg was waiting to open a FIFO (e.g. a `.gitignore` that is a named pipe) and was stopped."""


class OutputUnclear(Exception):
    """rg's output cannot be split unambiguously (a file name with a line break): search another way."""


FIFO_WAITS = frozenset({"wait_for_partner", "fifo_open"})
"""What /proc/<pid>/task/<tid>/wchan says of a thread blocked opening a FIFO (Linux)."""
FIFO_CHECK_AFTER = 0.25
"""Seconds before rg's threads are first looked at (a quick search never pays for it)."""
FIFO_CHECK_EVERY = 0.2


def find_ripgrep() -> str | None:
    """Path of `rg`, unless missing or disabled through AGENTCLI_NO_RIPGREP."""
    if os.environ.get(DISABLE_ENV, "") not in ("", "0"):
        return None
    return shutil.which("rg")


Printout = Literal["names", "counts", "lines"]
"""What rg is asked to print: `-l`, `--count` (with `--stats`), or the lines themselves."""


def ripgrep_search(
    workspace: Workspace, rg: str, query: SearchQuery, cancelled: threading.Event, files: FileFilter
) -> Results:
    """Run rg for `query`; what it reports passes `files` wherever rg's own selection is not the same."""
    if query.root_is_file and skipped_as_binary(query.root):
        return HitList([], [])  # rg searches a binary file named on its command line; the Python engine never does
    cwd = os.path.dirname(query.root) if query.root_is_file else query.root
    with_context = query.mode == "content" and bool(query.before or query.after)
    found: NamedFiles | CountedFiles | PrintedFiles
    run = partial(_run, workspace, rg, query, cancelled=cancelled)
    if query.mode == "files_with_matches":
        found = run("names", partial(_stat_names, cwd=cwd))
    elif query.mode == "count" and not query.multiline and not query.root_is_file:
        found = CountedFiles(run("counts", _read_all), cwd)
        if not found.complete:  # rg's --count leaves out a file with a NUL after a match
            found = PrintedFiles(run("lines", _read_all), cwd, with_context=False)
    else:
        found = PrintedFiles(run("lines", _read_all), cwd, with_context=with_context)
    if _selects_exactly(query):
        return found
    return found.only(files.accepts)


def _run(
    workspace: Workspace,
    rg: str,
    query: SearchQuery,
    printout: Printout,
    read: Callable[[Stdout], T],
    *,
    cancelled: threading.Event,
) -> T:
    """Run rg and `read` its output as it comes; raise what its exit and messages mean."""
    cwd, name = os.path.split(query.root) if query.root_is_file else (query.root, "")
    # "./" starts every name rg prints, so a name is never taken for a line or a count
    argv = [rg, *_arguments(query, printout), *_file_selection(query), "--", f"./{name}" if name else "."]
    with workspace.start(Command(argv, cwd=Path(cwd), origin="harness", stderr="pipe")) as proc:
        assert proc.stderr is not None
        blocked = threading.Event()
        threading.Thread(target=_watch, args=(proc, cancelled, blocked), daemon=True).start()
        errors = _Drain(proc.stderr)
        stdout = Stdout(proc.stdout)
        found = read(stdout)
        message = errors.text()
        status = proc.wait()
    if blocked.is_set():
        raise RipgrepBlocked()
    if status == 2 and "regex parse error" in message:
        raise PatternRejected(message)
    if status == 2 and not stdout.printed and message and not cancelled.is_set():
        raise RipgrepFailed(message)
    return found


@dataclass
class Stdout:
    """rg's standard output, and whether it printed anything (an error with no output is a failure)."""

    pipe: IO[bytes]
    printed: bool = False

    def chunks(self) -> Iterator[bytes]:
        while chunk := os.read(self.pipe.fileno(), 1 << 16):
            self.printed = True
            yield chunk


def _read_all(stdout: Stdout) -> bytes:
    return b"".join(stdout.chunks())


def _arguments(query: SearchQuery, printout: Printout) -> list[str]:
    args = ["--no-config", "--hidden", "--no-ignore-dot", "--no-ignore-global", "--no-messages", "--color=never"]
    if printout == "names":
        args += ["--files-with-matches", "--null"]
    elif printout == "counts":
        args += ["--count", "--null", "--with-filename", "--stats"]
    else:
        args += ["--heading", "--null", "--line-number", "--byte-offset", "--with-filename"]
        args += [f"--max-columns={MAX_COLUMNS}", "--max-columns-preview"]
    if query.ignore_case:
        args.append("--ignore-case")
    if query.multiline:
        args += ["--multiline", "--multiline-dotall"]
    if printout == "lines" and query.mode == "content":
        args += [f"--before-context={query.before}", f"--after-context={query.after}"]
    args += [f"--glob=!{name}" for name in sorted(VCS_DIRS)]
    return [*args, f"--regexp={query.pattern}"]


def _selects_exactly(query: SearchQuery) -> bool:
    """Whether rg picks exactly the files Grep may report, with no `FileFilter.accepts` needed.

    rg searches a file named on its command line whatever its type or glob, and a `--glob`
    whitelist overrides rg's ignore rules (ours don't).
    """
    return not query.root_is_file and (not query.glob or _glob_as_type(query) is not None)


def _file_selection(query: SearchQuery) -> list[str]:
    """rg's arguments for `type` and `glob`."""
    as_type = _glob_as_type(query)
    type_globs = (as_type,) if as_type else query.type_globs or ()
    args = [f"--type-add=agentcli:{glob}" for glob in type_globs] + (["--type=agentcli"] if type_globs else [])
    if query.glob and as_type is None:
        args.append(f"--glob={query.glob}")
    return args


def _glob_as_type(query: SearchQuery) -> str | None:
    """The file-name glob that `glob` amounts to (`**/*.ts` → `*.ts`), if rg can take it as a type.

    rg applies a type within its ignore rules, unlike `--glob`. Not a glob that looks at
    folders, negates, or needs escapes, and not with a `type` too (rg would search either).
    """
    glob = query.glob
    if not glob or query.type_globs:
        return None
    while glob.startswith("**/"):
        glob = glob[3:]
    if not glob or glob != glob.strip() or glob[0] in "!#" or any(c in glob for c in "/\\:"):
        return None
    return glob


class _Drain(threading.Thread):
    """Reads rg's messages to their end in the background, while its results are read."""

    def __init__(self, pipe: IO[bytes]) -> None:
        super().__init__(daemon=True)
        self.pipe = pipe
        self.data = b""
        self.start()

    def run(self) -> None:
        self.data = self.pipe.read()

    def text(self) -> str:
        self.join()
        return self.data.decode("utf-8", errors="replace").strip()


def _watch(proc: Process, cancelled: threading.Event, blocked: threading.Event) -> None:
    """Kill rg when the user interrupts, or when it waits on a FIFO (which would be forever)."""
    waited = 0.0
    next_check = FIFO_CHECK_AFTER
    while proc.poll() is None:
        stop = cancelled.wait(0.05)
        waited += 0.05
        if not stop and waited >= next_check:
            next_check += FIFO_CHECK_EVERY
            if _waiting_on_fifo(proc.pid):
                blocked.set()
                stop = True
        if stop:
            proc.kill()
            return


def _waiting_on_fifo(pid: int) -> bool:
    """Whether a thread of `pid` is blocked opening a FIFO (rg opens ignore files without O_NONBLOCK)."""
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:  # no /proc (not Linux), or the process is gone
        return False
    for task in tasks:
        try:
            with open(f"/proc/{pid}/task/{task}/wchan", encoding="ascii", errors="replace") as wchan:
                if wchan.read().strip() in FIFO_WAITS:
                    return True
        except OSError:
            continue
    return False


class NamedFiles:
    """files_with_matches results: the paths and their mtimes."""

    matched_lines = line_count = 0

    def __init__(self, paths: list[str], mtimes: list[int]) -> None:
        self.paths = paths
        self._mtimes = mtimes

    def mtimes(self) -> list[int]:
        return self._mtimes

    def hits(self, index: int) -> Hits:
        return FileHits(self.paths[index])

    def only(self, keep: Callable[[str], bool]) -> NamedFiles:
        kept = [i for i, path in enumerate(self.paths) if keep(path)]
        return NamedFiles([self.paths[i] for i in kept], [self._mtimes[i] for i in kept])


def _stat_names(stdout: Stdout, cwd: str) -> NamedFiles:
    """`-l --null` output, each file stat'ed as its name arrives, while rg is still searching."""
    paths: list[str] = []
    mtimes: list[int] = []
    rest = b""
    for chunk in stdout.chunks():
        names = (rest + chunk).split(b"\0")
        rest = names.pop()
        for name in names:
            path = _absolute(cwd, os.fsdecode(name))
            paths.append(path)
            mtimes.append(modified_ns(path))
    return NamedFiles(paths, mtimes)


class CountedFiles:
    """count results from `--count --null --stats`: `./name NUL count` per file, then rg's statistics."""

    def __init__(self, out: bytes, cwd: str) -> None:
        listing, _, stats = out.rpartition(b"\n\n")  # the statistics hold no empty line
        reported = _FILES_MATCHED.search(stats)
        counts = _COUNT_LINE.findall(os.fsdecode(listing + b"\n")) if listing else []
        if reported is None or len(counts) != listing.count(b"\0"):
            raise OutputUnclear()
        self.complete = len(counts) == int(reported[1])
        """False when a file that matched is missing from the counts (binary data after the match)."""
        self.paths = [_absolute(cwd, name) for name, _ in counts]
        self._counts = [int(count) for _, count in counts]
        self.matched_lines = self.line_count = sum(self._counts)

    def mtimes(self) -> list[int]:
        return [modified_ns(path) for path in self.paths]

    def hits(self, index: int) -> LineCount:
        return LineCount(self._counts[index])

    def only(self, keep: Callable[[str], bool]) -> HitList:
        return _only(self, keep)


_COUNT_LINE = re.compile(r"(\./[^\0]*)\0([0-9]+)\n")
_FILES_MATCHED = re.compile(rb"^([0-9]+) files contained matches$", re.MULTILINE)


@dataclass(frozen=True)
class LineCount:
    """A file known by how many of its lines matched (count mode shows no lines)."""

    matched_count: int

    @property
    def line_count(self) -> int:
        return self.matched_count

    def lines(self) -> Iterator[tuple[int, bool, str]]:
        return iter(())


class PrintedFiles:
    """content and count results as rg printed them: totals counted in bulk, files split only when shown.

    Every name starts with "./" (rg is given `.` or `./file`), so it is never taken for a line
    (`N:`, `N-`, `--`), and neither is rg's "./name: WARNING: stopped searching binary file"
    ending a file's lines.
    """

    def __init__(self, out: bytes, cwd: str, *, with_context: bool) -> None:
        # Lines are never empty, so an empty line is what ends a file's lines.
        self._blocks = out.split(b"\n\n") if b"\0" in out else []  # no name: at most a warning
        self._ends = [block.find(b"\0") for block in self._blocks]
        names = b"\0".join(block[:end] for block, end in zip(self._blocks, self._ends, strict=True))
        if -1 in self._ends or not _distinct(names, len(self._blocks)):
            raise OutputUnclear()
        self.paths = [_absolute(cwd, name) for name in os.fsdecode(names).split("\0")] if names else []
        others = max(len(self._blocks) - 1, 0)  # each file after the first adds an empty line
        warnings = out.count(b"\n./") - others
        separators = out.count(b"\n--\n") if with_context else 0
        self.line_count = out.count(b"\n") - others - warnings - separators
        self.matched_lines = len(_MATCHED_AFTER.findall(out)) if with_context else self.line_count

    def mtimes(self) -> list[int]:
        return [modified_ns(path) for path in self.paths]

    def hits(self, index: int) -> PrintedHits:
        return PrintedHits(self._blocks[index][self._ends[index] + 1 :], self.paths[index])

    def only(self, keep: Callable[[str], bool]) -> HitList:
        return _only(self, keep)


def _only(found: Results, keep: Callable[[str], bool]) -> HitList:
    """The files of `found` whose path `keep` accepts."""
    kept = [i for i, path in enumerate(found.paths) if keep(path)]
    return HitList([found.paths[i] for i in kept], [found.hits(i) for i in kept])


def _distinct(names: bytes, count: int) -> bool:
    """Whether `count` NUL-joined names each start with "./" and hold no line break."""
    return not count or (names.startswith(b"./") and names.count(b"\0./") == count - 1 and b"\n" not in names)


_MATCHED_AFTER = re.compile(rb"[\n\0][0-9]+:")
_MATCHED_LINE = re.compile(rb"^[0-9]+:", re.MULTILINE)
_SHOWN_LINE = re.compile(rb"^[0-9]+[:-]", re.MULTILINE)
_LINE_PREFIX = re.compile(rb"([0-9]+)([:-])([0-9]+)[:-]")
PREVIEW_END = " [... omitted end of long line]"
"""What rg ends the start of a long line with (`--max-columns-preview`)."""
LENGTH_CHUNK = 1 << 20


class PrintedHits:
    """One file's lines as rg printed them: `N:OFFSET:text` matched, `N-OFFSET-text` context, `--`
    between groups; `path`: the file, where a long line is measured."""

    def __init__(self, body: bytes, path: str) -> None:
        self._body = body
        self._path = path

    @property
    def matched_count(self) -> int:
        return len(_MATCHED_LINE.findall(self._body))

    @property
    def line_count(self) -> int:
        return len(_SHOWN_LINE.findall(self._body))

    def lines(self) -> Iterator[tuple[int, bool, str]]:
        for line in self._body.split(b"\n"):
            prefix = _LINE_PREFIX.match(line)
            if prefix is None:
                continue  # the "--" between groups, the empty string after the last line, a warning
            text = line[prefix.end() :].decode("utf-8", errors="replace")
            text = text[:-1] if text.endswith("\r") else text
            if text.endswith(PREVIEW_END) and len(text) == MAX_COLUMNS + len(PREVIEW_END):
                start = text[:MAX_COLUMNS]
                yield int(prefix[1]), prefix[2] == b":", clipped(start, _line_length(self._path, int(prefix[3])))
            else:
                yield int(prefix[1]), prefix[2] == b":", text


def _line_length(path: str, offset: int) -> int | None:
    """Characters of the line that starts at byte `offset` of `path` (its line break, and a `\r`
    before it, not counted), read a chunk at a time; None when it cannot be read (gone, or no
    longer a regular file: a FIFO is never opened blocking)."""
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    length, last = 0, ""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        require_regular(fd, path)
        os.lseek(fd, offset, os.SEEK_SET)
        while True:
            chunk = os.read(fd, LENGTH_CHUNK)
            end = chunk.find(b"\n")
            done = not chunk or end >= 0
            text = decoder.decode(chunk if end < 0 else chunk[:end], final=done)
            length += len(text)
            last = text[-1:] or last
            if done:
                return length - (last == "\r")
    except OSError:
        return None
    finally:
        os.close(fd)


def _absolute(cwd: str, name: str) -> str:
    if name.startswith("./"):
        return cwd.rstrip("/") + name[1:]
    return os.path.normpath(os.path.join(cwd, name))
