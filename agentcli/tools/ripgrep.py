"""Grep's fast engine: run `rg` and parse what it prints (`--json` for lines, `-l --null` for files)."""

from __future__ import annotations

import base64
import contextlib
import json
import os
import re
import shutil
import subprocess
import threading

from agentcli.contracts import JSON
from agentcli.credentials import child_environment
from agentcli.tools.ignore import VCS_DIRS
from agentcli.tools.search import FileHits, SearchQuery

DISABLE_ENV = "AGENTCLI_NO_RIPGREP"
"""Set to 1 to make Grep use the pure-Python engine even when rg is installed."""


class PatternRejected(Exception):
    """ripgrep's regex engine rejected the pattern (it may still be valid Python regex)."""


class RipgrepFailed(Exception):
    """rg stopped with an error and no results (e.g. a malformed glob)."""


class RipgrepBlocked(Exception):
    """rg was waiting to open a FIFO (e.g. a `.gitignore` that is a named pipe) and was stopped."""


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


def ripgrep_search(rg: str, query: SearchQuery, cancelled: threading.Event) -> list[FileHits]:
    """Run rg for `query`. With a `glob`, the caller must still apply `FileFilter.accepts`."""
    cwd, target = os.path.split(query.root) if query.root_is_file else (query.root, ".")
    proc = subprocess.Popen(
        [rg, *_arguments(query), "--", target],
        cwd=cwd,
        env=child_environment(),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    blocked = threading.Event()
    watchdog = threading.Thread(target=_watch, args=(proc, cancelled, blocked), daemon=True)
    watchdog.start()
    out, err = proc.communicate()
    if blocked.is_set():
        raise RipgrepBlocked()
    message = err.decode("utf-8", errors="replace").strip()
    if proc.returncode == 2 and "regex parse error" in message:
        raise PatternRejected(message)
    if proc.returncode == 2 and not out and message and not cancelled.is_set():
        raise RipgrepFailed(message)
    if query.mode == "files_with_matches":
        return [FileHits(_absolute(cwd, os.fsdecode(name))) for name in out.split(b"\0") if name]
    if query.mode == "count" and not query.multiline:
        return _parse_counts(out, cwd)
    return _parse_json(out, cwd)


def _arguments(query: SearchQuery) -> list[str]:
    args = ["--no-config", "--hidden", "--no-ignore-dot", "--no-ignore-global", "--no-messages"]
    # Not --count: it drops a file whose NUL byte comes after a match, where --json and -l keep it.
    args += ["--files-with-matches", "--null"] if query.mode == "files_with_matches" else ["--json"]
    if query.ignore_case:
        args.append("--ignore-case")
    if query.multiline:
        args += ["--multiline", "--multiline-dotall"]
    if query.mode == "content":
        args += [f"--before-context={query.before}", f"--after-context={query.after}"]
    if query.type_globs:
        args += [f"--type-add=agentcli:{glob}" for glob in query.type_globs] + ["--type=agentcli"]
    if query.glob:
        args.append(f"--glob={query.glob}")
    args += [f"--glob=!{name}" for name in sorted(VCS_DIRS)]
    return [*args, f"--regexp={query.pattern}"]


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


# In rg's JSON a `"` inside a string is escaped, so this cannot match inside the line's text.
_LINE_NUMBER = re.compile(rb'},"line_number":(\d+),')


def _parse_counts(out: bytes, cwd: str) -> list[FileHits]:
    """Count mode: only which lines matched, so skip decoding each match (rg prints a file's events together)."""
    found: list[FileHits] = []
    for raw in out.splitlines():
        if raw.startswith(b'{"type":"begin"'):
            found.append(FileHits(_absolute(cwd, _path(json.loads(raw)["data"]["path"]))))
        elif raw.startswith(b'{"type":"match"') and (number := _LINE_NUMBER.search(raw)):
            found[-1].matched[int(number.group(1))] = ""
    return [hits for hits in found if hits.matched]


def _parse_json(out: bytes, cwd: str) -> list[FileHits]:
    by_path: dict[str, FileHits] = {}
    for raw in out.splitlines():
        if not raw.startswith((b'{"type":"match"', b'{"type":"context"')):
            continue  # begin/end/summary events carry nothing Grep shows
        event: JSON = json.loads(raw)
        kind = event["type"]
        data = event["data"]
        path = _absolute(cwd, _path(data["path"]))
        hits = by_path.get(path)
        if hits is None:
            hits = by_path[path] = FileHits(path)
        lines = _text(data["lines"]).split("\n")
        if len(lines) > 1 and lines[-1] == "":
            lines.pop()
        into = hits.matched if kind == "match" else hits.context
        for offset, line in enumerate(lines):
            into[data["line_number"] + offset] = line[:-1] if line.endswith("\r") else line
    return list(by_path.values())


def _text(field: JSON) -> str:
    if "text" in field:
        return str(field["text"])
    return base64.b64decode(field["bytes"]).decode("utf-8", errors="replace")


def _path(field: JSON) -> str:
    if "text" in field:
        return str(field["text"])
    return os.fsdecode(base64.b64decode(field["bytes"]))


def _absolute(cwd: str, name: str) -> str:
    if name.startswith("./"):
        return cwd.rstrip("/") + name[1:]
    return os.path.normpath(os.path.join(cwd, name))
