"""The context tests read skills, commands and instructions from a home folder of their own."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def own_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """HOME is a new empty folder: `~/.claude/skills` and `~/.claude/commands` are the test's, not the machine's."""
    home = tmp_path_factory.mktemp("user-home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)  # ~/.claude is then HOME's
    return home


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """An empty AGENTCLI_HOME."""
    return tmp_path / "agentcli-home"
