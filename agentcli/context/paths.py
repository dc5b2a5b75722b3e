"""Where a project's per-user state lives under $AGENTCLI_HOME.

`projects/<readable slug>-<hash>/`: the slug alone is not unique (`/x/proj-a` and
`/x/proj_a` both read `-x-proj-a`), so eight hex digits of the SHA-256 of the project's
real path follow it. Folders of the older layout (the slug alone) are still read, but only
for what certainly belongs to this project: transcripts whose header records exactly this
path as `cwd` (sessions/store.py), and their memory folder when every transcript there does.
"""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path

from agentcli.sessions.transcript import recorded_cwd
from agentcli.settings import agentcli_home

SLUG_CHARS = 200
"""The readable part keeps the end of a longer path, so the folder name stays within NAME_MAX."""
HASH_CHARS = 8


def legacy_slug(cwd: Path) -> str:
    """`/work/my app` → `-work-my-app`: every character that is not a letter or digit becomes `-`."""
    return re.sub(r"[^A-Za-z0-9]", "-", str(cwd))


def project_slug(cwd: Path) -> str:
    """`/work/my app` → `-work-my-app-1a2b3c4d`: the readable slug, then a short hash of the real path."""
    real = os.path.realpath(cwd)
    digest = hashlib.sha256(os.fsencode(real)).hexdigest()[:HASH_CHARS]
    return f"{legacy_slug(Path(real))[-SLUG_CHARS:]}-{digest}"


def project_state_dir(cwd: Path, home: Path | None = None) -> Path:
    """`$AGENTCLI_HOME/projects/<slug>-<hash>/`: transcripts and memory for the project at `cwd`."""
    return (home or agentcli_home()) / "projects" / project_slug(cwd)


def legacy_state_dir(cwd: Path, home: Path | None = None) -> Path:
    """The folder older versions used, which other projects with the same slug may share."""
    return (home or agentcli_home()) / "projects" / legacy_slug(cwd)


def is_this_project(recorded: str | None, cwd: Path) -> bool:
    """Whether a transcript's recorded `cwd` is exactly the project at `cwd`."""
    return recorded is not None and recorded in (str(cwd), os.path.realpath(cwd))


def memory_dir(cwd: Path, home: Path | None = None) -> Path:
    """The persistent memory folder the model may read and write for this project.

    An older layout's memory folder stays in use while the new one does not exist, but only
    when that folder is certainly this project's: every transcript in it records this path.
    """
    current = project_state_dir(cwd, home) / "memory"
    legacy = legacy_state_dir(cwd, home)
    if current.exists() or not (legacy / "memory").is_dir():
        return current
    transcripts = list(legacy.glob("*.jsonl"))
    if transcripts and all(is_this_project(recorded_cwd(path), cwd) for path in transcripts):
        return legacy / "memory"
    return current
