"""Facts about the session, gathered once at its start: environment and a git snapshot.

They go into the system prompt, which must not change during a session, so nothing here
is ever re-read later (the snapshot says so to the model).
"""

from __future__ import annotations

import datetime
import platform
import subprocess
from dataclasses import dataclass
from pathlib import Path

from agentcli.context.paths import memory_dir
from agentcli.credentials import child_environment

GIT_TIMEOUT_S = 3.0
MAX_STATUS_LINES = 30
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


def gather_facts(cwd: Path, model: str, today: datetime.date | None = None, home: Path | None = None) -> SessionFacts:
    """Everything the system prompt states about the session, read once, now."""
    return SessionFacts(
        cwd=cwd,
        model=model,
        platform=platform.system().lower() or "unknown",
        os_version=platform.release(),
        shell="bash",  # what the Bash tool runs, whatever the user's login shell is
        date=(today or datetime.date.today()).isoformat(),
        memory_dir=memory_dir(cwd, home),
        git=git_snapshot(cwd),
    )


def git_snapshot(cwd: Path) -> str:
    """Branch, short status and the last few commit subjects; or why there are none."""
    try:
        status = _git(cwd, "status", "--short", "--branch")
    except subprocess.TimeoutExpired:
        return f"A git repository, but `git status` took over {GIT_TIMEOUT_S:g} s; run it yourself if you need it."
    if status is None:
        return "Not a git repository."
    lines = status.splitlines()
    branch = lines[0].removeprefix("## ") if lines and lines[0].startswith("## ") else "(unknown)"
    changes = lines[1:] if lines and lines[0].startswith("## ") else lines
    if len(changes) > MAX_STATUS_LINES:
        more = len(changes) - MAX_STATUS_LINES
        changes = [*changes[:MAX_STATUS_LINES], f"... and {more} more (run `git status` for all)"]
    try:
        log = _git(cwd, "log", f"-{RECENT_COMMITS}", "--format=%h %s")
    except subprocess.TimeoutExpired:
        log = None
    parts = [
        f"Branch: {branch}",
        "Status:",
        "\n".join(changes) if changes else "(clean)",
        "Recent commits:",
        log.strip() if log and log.strip() else "(no commits yet)",
    ]
    return "\n".join(parts)


def _git(cwd: Path, *args: str) -> str | None:
    """stdout of a git command; None when it fails or git is missing (raises TimeoutExpired)."""
    env = {**child_environment(), "GIT_OPTIONAL_LOCKS": "0", "GIT_TERMINAL_PROMPT": "0"}
    try:
        done = subprocess.run(
            ["git", "-c", "core.quotepath=off", *args],
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            errors="replace",
            timeout=GIT_TIMEOUT_S,
        )
    except OSError:
        return None
    return done.stdout if done.returncode == 0 else None
