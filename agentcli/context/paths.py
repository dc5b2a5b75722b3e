"""Where a project's per-user state lives under $AGENTCLI_HOME."""

from __future__ import annotations

import re
from pathlib import Path

from agentcli.settings import agentcli_home


def project_slug(cwd: Path) -> str:
    """`/work/my app` → `-work-my-app`: every character that is not a letter or digit becomes `-`."""
    return re.sub(r"[^A-Za-z0-9]", "-", str(cwd))


def project_state_dir(cwd: Path, home: Path | None = None) -> Path:
    """`$AGENTCLI_HOME/projects/<slug>/`: transcripts and memory for the project at `cwd`."""
    return (home or agentcli_home()) / "projects" / project_slug(cwd)


def memory_dir(cwd: Path, home: Path | None = None) -> Path:
    """The persistent memory folder the model may read and write for this project."""
    return project_state_dir(cwd, home) / "memory"
