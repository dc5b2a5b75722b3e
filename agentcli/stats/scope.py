"""Which transcripts `agentcli stats` reads: this project's, or every project's; and since when."""

from __future__ import annotations

import contextlib
import datetime
import re
from pathlib import Path

from agentcli.errors import UsageError
from agentcli.sessions.store import SUFFIX, session_files
from agentcli.settings import agentcli_home

_AGO = re.compile(r"(\d+)\s*([mhdw])")
_UNITS = {"m": "minutes", "h": "hours", "d": "days", "w": "weeks"}


def transcripts(cwd: Path, *, all_projects: bool) -> list[Path]:
    """The sessions' transcripts (not sub-agents': those are read with their session)."""
    if not all_projects:
        return session_files(cwd)
    found: list[Path] = []
    with contextlib.suppress(OSError):  # no projects yet
        for folder in sorted((agentcli_home() / "projects").iterdir()):
            with contextlib.suppress(OSError):
                found += sorted(path for path in folder.iterdir() if path.suffix == SUFFIX)
    return found


def parse_since(text: str, now: datetime.datetime | None = None) -> datetime.datetime:
    """`7d`, `24h`, `30m`, `2w` ago, or a date (`2026-03-01`, local midnight) or ISO time.
    UsageError for anything else."""
    now = now or datetime.datetime.now(datetime.UTC)
    if match := _AGO.fullmatch(text.strip()):
        return now - datetime.timedelta(**{_UNITS[match[2]]: int(match[1])})
    try:
        when = datetime.datetime.fromisoformat(text.strip())
    except ValueError:
        raise UsageError(
            f"--since {text!r} is not a period or a date. Give one like 7d, 24h, 30m, 2w or 2026-03-01."
        ) from None
    return when if when.tzinfo is not None else when.astimezone()
