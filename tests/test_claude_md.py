"""The repository's own CLAUDE.md: it loads through agentcli's instruction loader, its `@`
imports resolve, it stays short, and what it names exists."""

from __future__ import annotations

import os
import re
from pathlib import Path

from agentcli.context.instructions import load_instructions

REPO = Path(__file__).resolve().parent.parent
MAX_LINES = 60


def test_claude_md_loads_with_its_imports_resolved(tmp_path: Path) -> None:
    loaded = load_instructions(REPO, home=tmp_path)

    files = {file.path.relative_to(REPO).as_posix(): file for file in loaded if file.path.is_relative_to(REPO)}
    assert "CLAUDE.md" in files
    claude = files["CLAUDE.md"]
    assert claude.notes == [] and claude.withheld == [] and claude.unreadable is None
    imported = [file for file in loaded if file.imported_by == claude.path]
    assert [file.path.relative_to(REPO).as_posix() for file in imported] == ["docs/dev/protocol.md"]
    assert all(file.notes == [] and file.unreadable is None for file in imported)
    assert "Every tool call gets exactly one result" in imported[0].text
    assert len(claude.text.splitlines()) < MAX_LINES


def test_what_claude_md_names_exists() -> None:
    text = (REPO / "CLAUDE.md").read_text()

    for script in re.findall(r"`(scripts/\w+)", text):
        assert os.access(REPO / script, os.X_OK), script
    paths = set(re.findall(r"`((?:agentcli|tests|bench|docs)/[\w/.]*)`", text))
    short = set(re.findall(r"`(\w+\.py|\w+/)`", text))  # `loop.py`, `tools/`: in agentcli/ (or at the top)
    assert len(paths | short) > 10  # the layout is read, not skipped
    missing = [name for name in paths if not (REPO / name).exists()]
    missing += [name for name in short if not ((REPO / "agentcli" / name).exists() or (REPO / name).exists())]
    assert sorted(missing) == []
