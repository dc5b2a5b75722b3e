"""`agentcli stats` and `/stats`: read the transcripts in scope and show (or print as JSON) their figures."""

from __future__ import annotations

import datetime
import json
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from agentcli.catalog import MODELS_SETTING, model_info
from agentcli.contracts import JSON
from agentcli.errors import UsageError
from agentcli.model_settings import check_model_table
from agentcli.settings import load_settings
from agentcli.stats.collect import Tally, figures
from agentcli.stats.render import card, report
from agentcli.stats.scope import batch_transcripts, parse_since, transcripts

if TYPE_CHECKING:
    from rich.console import Group


def tally_of(paths: Iterable[Path], cwd: Path, since: datetime.datetime | None = None) -> Tally:
    """The transcripts at `paths` read, priced with the model table and `cwd`'s `models` settings."""
    settings = load_settings(cwd)
    check_model_table(settings)  # its prices are used as they are
    overrides = settings.get(MODELS_SETTING)
    tally = Tally(lambda name: model_info(name, overrides), since)
    for path in paths:
        tally.read_session(path)
    return tally


def stats_text(
    cwd: Path, *, all_projects: bool, since: str | None, as_json: bool, width: int, batch: Path | None = None
) -> str:
    """What `agentcli stats` prints: this project's sessions, every project's, or those of the
    batch whose folder is `batch`. UsageError for a bad `--since`, a folder that is not a
    batch's, or malformed settings."""
    start = None if since is None else parse_since(since)
    if batch is not None and all_projects:
        raise UsageError("give --all or a batch's folder, not both.")
    paths = batch_transcripts(batch) if batch is not None else transcripts(cwd, all_projects=all_projects)
    found = figures(tally_of(paths, cwd, start))
    if as_json:
        return json.dumps(found, indent=2)
    where = f"the batch in {batch}" if batch is not None else "all projects" if all_projects else str(cwd)
    period = "" if start is None else f" since {start.astimezone():%Y-%m-%d %H:%M}"
    if not found["sessions"]:
        hint = (
            "" if all_projects or batch is not None else " Run agentcli here first, or see every project's with --all."
        )
        return f"No sessions recorded for {where}{period} yet.{hint}"
    folders = "tasks" if batch is not None else "folders"
    heading = f"agentcli stats: {where}{period}, {found['sessions']} sessions in {found['projects']} {folders}"
    return rendered(report(found, heading), width)


def session_card(path: Path, cwd: Path) -> Group | str:
    """`/stats`: the figures of the session whose transcript is `path` (its sub-agents' included)."""
    found: JSON = figures(tally_of([path], cwd))
    if not found["sessions"]:
        return "No statistics yet: this conversation has no recorded messages."
    return card(found, f"This session ({path.name.removesuffix('.jsonl')})")


def rendered(renderable: object, width: int) -> str:
    from rich.console import Console

    console = Console(width=width, color_system=None, highlight=False, soft_wrap=False)
    with console.capture() as captured:
        console.print(renderable)
    return captured.get().rstrip("\n")
