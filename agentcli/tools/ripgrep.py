"""Grep's fast engine: run `rg` and parse its plain output (`-l --null` for files, `--heading --null -n` for lines).

rg prints a file's lines together; with `--heading --null` the file name comes once, ended by
a NUL (so any name parses), then `N:text` for a matched line and `N-text` for a context line,
`--` between non-adjacent groups, and an empty line before the next file. Only the files Grep
shows are split into lines; the rest are counted without being decoded.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import subprocess
import threading
from collections.abc import Callable, Iterator
from typing import IO

from agentcli.credentials import child_environment
from agentcli.tools.ignore import VCS_DIRS
from agentcli.tools.search import (
    FileFilter,
    FileHits,
    HitList,
    Hits,
    Results,
    SearchQuery,
    modified_ns,
    skipped_as_binary,
)

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


def ripgrep_search(rg: str, query: SearchQuery, cancelled: threading.Event, files: FileFilter) -> Results:
    """Run rg for `query`; what it reports passes `files` wherever rg's own selection is not the same."""
    if query.root_is_file and skipped_as_binary(query.root):
        return HitList([], [])  # rg searches a binary file named on its command line; the Python engine never does
    cwd, name = os.path.split(query.root) if query.root_is_file else (query.root, "")
    selection, exact = _file_selection(query)
    found: NamedFiles | PrintedFiles
    with subprocess.Popen(
        [rg, *_arguments(query), *selection, "--", f"./{name}" if name else "."],
        cwd=cwd,
        env=child_environment(),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    ) as proc:
        assert proc.stdout is not None and proc.stderr is not None
        blocked = threading.Event()
        threading.Thread(target=_watch, args=(proc, cancelled, blocked), daemon=True).start()
        errors = _Drain(proc.stderr)
        if query.mode == "files_with_matches":
            found = _stat_names(proc.stdout, cwd)
            printed = bool(found.paths)
        else:
            out = proc.stdout.read()
            printed = bool(out)
        message = errors.text()
        proc.wait()
    if blocked.is_set():
        raise RipgrepBlocked()
    if proc.returncode == 2 and "regex parse error" in message:
        raise PatternRejected(message)
    if proc.returncode == 2 and not printed and message and not cancelled.is_set():
        raise RipgrepFailed(message)
    if query.mode != "files_with_matches":
        found = PrintedFiles(out, cwd, with_context=query.mode == "content" and bool(query.before or query.after))
    if exact and not query.root_is_file:
        return found
    return found.only(files.accepts)


def _arguments(query: SearchQuery) -> list[str]:
    args = ["--no-config", "--hidden", "--no-ignore-dot", "--no-ignore-global", "--no-messages", "--color=never"]
    if query.mode == "files_with_matches":
        args += ["--files-with-matches", "--null"]
    else:
        # Not --count: it drops a file whose NUL byte comes after a match, where -l and the lines keep it.
        args += ["--heading", "--null", "--line-number", "--with-filename"]
    if query.ignore_case:
        args.append("--ignore-case")
    if query.multiline:
        args += ["--multiline", "--multiline-dotall"]
    if query.mode == "content":
        args += [f"--before-context={query.before}", f"--after-context={query.after}"]
    args += [f"--glob=!{name}" for name in sorted(VCS_DIRS)]
    return [*args, f"--regexp={query.pattern}"]


def _file_selection(query: SearchQuery) -> tuple[list[str], bool]:
    """rg's arguments for `type` and `glob`, and whether rg then selects exactly the files Grep may report.

    A `--glob` whitelist overrides rg's ignore rules (ours don't), so its results need
    `FileFilter.accepts`. A glob that only names files (`*.py`, `**/*.{ts,tsx}`) goes in as a
    type instead, which rg applies within its ignore rules: exact, and no per-file check.
    """
    if query.type_globs:
        args = [f"--type-add=agentcli:{glob}" for glob in query.type_globs] + ["--type=agentcli"]
        return ([*args, f"--glob={query.glob}"], False) if query.glob else (args, True)
    if not query.glob:
        return [], True
    name_glob = _name_only(query.glob)
    if name_glob is None:
        return [f"--glob={query.glob}"], False
    return [f"--type-add=agentcli:{name_glob}", "--type=agentcli"], True


def _name_only(glob: str) -> str | None:
    """The file-name glob `glob` amounts to (`**/*.ts` → `*.ts`), or None if it looks at folders too."""
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


def _watch(proc: subprocess.Popen[bytes], cancelled: threading.Event, blocked: threading.Event) -> None:
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
            with contextlib.suppress(ProcessLookupError):
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


def _stat_names(stdout: IO[bytes], cwd: str) -> NamedFiles:
    """`-l --null` output, each file stat'ed as its name arrives, while rg is still searching."""
    paths: list[str] = []
    mtimes: list[int] = []
    rest = b""
    while chunk := os.read(stdout.fileno(), 1 << 16):
        names = (rest + chunk).split(b"\0")
        rest = names.pop()
        for name in names:
            path = _absolute(cwd, os.fsdecode(name))
            paths.append(path)
            mtimes.append(modified_ns(path))
    return NamedFiles(paths, mtimes)


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
        return PrintedHits(self._blocks[index][self._ends[index] + 1 :])

    def only(self, keep: Callable[[str], bool]) -> HitList:
        kept = [i for i, path in enumerate(self.paths) if keep(path)]
        return HitList([self.paths[i] for i in kept], [self.hits(i) for i in kept])


def _distinct(names: bytes, count: int) -> bool:
    """Whether `count` NUL-joined names each start with "./" and hold no line break."""
    return not count or (names.startswith(b"./") and names.count(b"\0./") == count - 1 and b"\n" not in names)


_MATCHED_AFTER = re.compile(rb"[\n\0][0-9]+:")
_MATCHED_LINE = re.compile(rb"^[0-9]+:", re.MULTILINE)
_SHOWN_LINE = re.compile(rb"^[0-9]+[:-]", re.MULTILINE)
_LINE_PREFIX = re.compile(rb"([0-9]+)([:-])")


class PrintedHits:
    """One file's lines as rg printed them: `N:text` matched, `N-text` context, `--` between groups."""

    def __init__(self, body: bytes) -> None:
        self._body = body

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
            yield int(prefix[1]), prefix[2] == b":", text[:-1] if text.endswith("\r") else text


def _absolute(cwd: str, name: str) -> str:
    if name.startswith("./"):
        return cwd.rstrip("/") + name[1:]
    return os.path.normpath(os.path.join(cwd, name))
