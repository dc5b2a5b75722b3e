"""Facts about the session, gathered once at its start: environment and a git snapshot.

They go into the system prompt, which must not change during a session, so nothing here
is ever re-read later (the snapshot says so to the model). git runs in the session's workspace.
"""

from __future__ import annotations

import datetime
import platform
import threading
from dataclasses import dataclass
from pathlib import Path

from agentcli.context.paths import memory_dir
from agentcli.workspace.contract import Command, Workspace

GIT_TIMEOUT_S = 3.0
MAX_STATUS_LINES = 30
STATUS_CHARS = 200_000
"""Characters of git's output kept: far more than the lines shown need, in bounded memory."""
RECENT_COMMITS = 5


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
        status, printed = _git(workspace, "status", "--short", "--branch")
    except TimeoutError:
        return f"A git repository, but `git status` took over {GIT_TIMEOUT_S:g} s; run it yourself if you need it."
    if status is None:
        return "Not a git repository."
    lines = status.splitlines()
    headed = bool(lines) and lines[0].startswith("## ")
    branch = lines[0].removeprefix("## ") if headed else "(unknown)"
    changes = lines[1:] if headed else lines
    total = printed - (1 if headed else 0)  # the lines git printed, however many were kept
    if total > MAX_STATUS_LINES:
        changes = [*changes[:MAX_STATUS_LINES], f"... and {total - MAX_STATUS_LINES} more (run `git status` for all)"]
    try:
        log, _ = _git(workspace, "log", f"-{RECENT_COMMITS}", "--format=%h %s")
    except TimeoutError:
        log = None
    parts = [
        f"Branch: {branch}",
        "Status:",
        "\n".join(changes) if changes else "(clean)",
        "Recent commits:",
        log.strip() if log and log.strip() else "(no commits yet)",
    ]
    return "\n".join(parts)


def _git(workspace: Workspace, *args: str) -> tuple[str | None, int]:
    """stdout of a git command (at most `STATUS_CHARS` of it kept) and how many lines it printed;
    None when it fails or git is missing. Raises TimeoutError after `GIT_TIMEOUT_S`."""
    command = Command(
        ["git", "-c", "core.quotepath=off", *args],
        env={"GIT_OPTIONAL_LOCKS": "0", "GIT_TERMINAL_PROMPT": "0"},
        origin="harness",
        stderr="discard",
    )
    try:
        done = workspace.run(command, timeout=GIT_TIMEOUT_S, cancel=threading.Event(), output_limit=STATUS_CHARS)
    except OSError:
        return None, 0
    if done.outcome == "timeout":
        raise TimeoutError
    if done.exit_code != 0:
        return None, 0
    text = done.output.encode("utf-8", "surrogateescape").decode("utf-8", "replace")  # as text for the prompt
    return text, done.lines
