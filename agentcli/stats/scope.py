"""Which transcripts `agentcli stats` reads: this project's, or every project's; and since when."""

from __future__ import annotations

import contextlib
import datetime
import re
from pathlib import Path

from agentcli.bounds import shown
from agentcli.errors import UsageError
from agentcli.sessions.store import SUFFIX, session_files
from agentcli.settings import agentcli_home

_AGO = re.compile(r"(\d+)\s*([mhdw])")
_UNITS = {"m": "minutes", "h": "hours", "d": "days", "w": "weeks"}
_MAX_PERIOD_DIGITS = 10
"""10,000,000,000 minutes is some 19,000 years: longer periods need not be computed to be refused."""
_EARLIEST = datetime.datetime(2, 1, 1, tzinfo=datetime.UTC)
_LATEST = datetime.datetime(9998, 12, 31, tzinfo=datetime.UTC)
"""A year's margin at each end of the calendar, so that any time zone can still show the time."""


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


def batch_transcripts(folder: Path) -> list[Path]:
    """The sessions of a batch's tasks (`agentcli batch --out folder`): `tasks/ID/transcripts/`.
    UsageError when `folder` is not a batch's."""
    from agentcli.batch.results import RESULTS

    if not (folder / RESULTS).is_file():
        raise UsageError(
            f"{folder} is not a batch's folder (it has no {RESULTS}): give the folder of "
            "`agentcli batch --out DIR`, or no folder for this project's sessions."
        )
    found: list[Path] = []
    with contextlib.suppress(OSError):
        for task in sorted((folder / "tasks").iterdir()):
            with contextlib.suppress(OSError):
                found += sorted(path for path in (task / "transcripts").iterdir() if path.suffix == SUFFIX)
    return found


def parse_since(text: str, now: datetime.datetime | None = None) -> datetime.datetime:
    """`7d`, `24h`, `30m`, `2w` ago, or a date (`2026-03-01`, local midnight) or ISO time.
    UsageError for anything else, and for a time the calendar cannot hold (before the year 2 or
    after 9998: a period such as `99999999999d` reaches back before the year 1)."""
    now = now or datetime.datetime.now(datetime.UTC)
    text = text.strip()
    try:
        when = _since(text, now)
    except (OverflowError, ValueError):  # past the calendar's ends, in some time zone
        when = None
    if when is None or not _EARLIEST <= when <= _LATEST:
        raise UsageError(
            f"--since {shown(text)} is further from now than agentcli can count (the years 2 to 9998). "
            "Leave --since out to count every session."
        )
    return when


def _since(text: str, now: datetime.datetime) -> datetime.datetime | None:
    """The time `text` names; None when it is too far back or ahead to compute."""
    if match := _AGO.fullmatch(text):
        if len(match[1].lstrip("0")) > _MAX_PERIOD_DIGITS:
            return None
        return now - datetime.timedelta(**{_UNITS[match[2]]: int(match[1])})
    try:
        when = datetime.datetime.fromisoformat(text)
    except ValueError:
        raise UsageError(
            f"--since {shown(text)} is not a period or a date. Give one like 7d, 24h, 30m, 2w or 2026-03-01."
        ) from None
    return when if when.tzinfo is not None else when.astimezone()
