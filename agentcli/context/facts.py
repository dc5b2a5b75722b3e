"""Facts about the session, gathered once at its start: environment and a git snapshot.

They go into the system prompt, which must not change during a session, so nothing here
is ever re-read later (the snapshot says so to the model). git runs in the session's workspace.
"""

from __future__ import annotations

import datetime
import platform
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from agentcli.context.paths import memory_dir
from agentcli.workspace.contract import Command, Workspace
from agentcli.workspace.running import read_head

GIT_TIMEOUT_S = 3.0
MAX_STATUS_LINES = 30
RECENT_COMMITS = 5
GIT_OUTPUT_LIMIT = 16 * 1024
"""Bytes of a git command's output read (then it is stopped): a repository's status or commit
subjects may be any size."""
MAX_LINE_CHARS = 300
"""A longer status line or commit subject is cut (a commit subject may be megabytes long)."""


class GitTimedOut(Exception):
    pass


@dataclass(frozen=True)
class SessionFacts:
    cwd: Path
    model: str
    platform: str
    os_version: str
    shell: str
    date: str
    memory_dir: Path
    git: str
    """The git snapshot as text, or a sentence saying there is none."""


def gather_facts(
    workspace: Workspace, model: str, today: datetime.date | None = None, home: Path | None = None
) -> SessionFacts:
    """Everything the system prompt states about the session, read once, now."""
    cwd = workspace.root
    return SessionFacts(
        cwd=cwd,
        model=model,
        platform=platform.system().lower() or "unknown",
        os_version=platform.release(),
        shell="bash",  # what the Bash tool runs, whatever the user's login shell is
        date=(today or datetime.date.today()).isoformat(),
        memory_dir=memory_dir(cwd, home),
        git=git_snapshot(workspace),
    )


def git_snapshot(workspace: Workspace) -> str:
    """Branch, short status and the last few commit subjects; or why there are none."""
    try:
        status = _git(workspace, "status", "--short", "--branch")
    except GitTimedOut:
        return f"A git repository, but `git status` took over {GIT_TIMEOUT_S:g} s; run it yourself if you need it."
    if status is None:
        return "Not a git repository."
    lines = status.lines
    branch = lines[0].removeprefix("## ") if lines and lines[0].startswith("## ") else "(unknown)"
    changes = lines[1:] if lines and lines[0].startswith("## ") else lines
    if len(changes) > MAX_STATUS_LINES or not status.complete:
        more = f"{len(changes) - MAX_STATUS_LINES}" if status.complete else "many"
        changes = [*changes[:MAX_STATUS_LINES], f"... and {more} more (run `git status` for all)"]
    try:
        log = _git(workspace, "log", f"-{RECENT_COMMITS}", "--format=%h %s")
        commits = "\n".join(log.lines).strip() if log else ""
    except GitTimedOut:
        commits = f"(`git log` took over {GIT_TIMEOUT_S:g} s)"
    parts = [
        f"Branch: {branch}",
        "Status:",
        "\n".join(changes) if changes else "(clean)",
        "Recent commits:",
        commits or "(no commits yet)",
    ]
    return "\n".join(parts)


class GitOutput(NamedTuple):
    lines: list[str]
    """Each at most MAX_LINE_CHARS long, or cut there with `…` (the last one too when the output went on)."""
    complete: bool
    """False when the output went on past GIT_OUTPUT_LIMIT bytes."""


def _git(workspace: Workspace, *args: str) -> GitOutput | None:
    """The lines a git command printed, read up to GIT_OUTPUT_LIMIT bytes (it is stopped then);
    None when it fails or git is missing (raises GitTimedOut)."""
    command = Command(
        ["git", "-c", "core.quotepath=off", *args],
        env={"GIT_OPTIONAL_LOCKS": "0", "GIT_TERMINAL_PROMPT": "0"},
        origin="harness",
        stderr="discard",
    )
    try:
        with workspace.start(command) as proc:  # leaving the block stops a git that goes on
            done = read_head(proc, GIT_OUTPUT_LIMIT, GIT_TIMEOUT_S)
    except OSError:
        return None
    if done.timed_out:
        raise GitTimedOut
    if done.complete and done.exit_code != 0:
        return None
    lines = [_short(line) for line in done.data.decode("utf-8", errors="replace").splitlines()]
    if not done.complete and lines and not lines[-1].endswith("…"):
        lines[-1] += "…"  # it went on
    return GitOutput(lines, complete=done.complete)


def _short(line: str) -> str:
    return line if len(line) <= MAX_LINE_CHARS else line[:MAX_LINE_CHARS] + "…"
