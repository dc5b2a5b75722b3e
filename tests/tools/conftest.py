"""Fixtures for the built-in tool tests: a temporary repository and a ToolContext on it."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentcli.contracts import ToolContext
from agentcli.workspace.local import LocalWorkspace


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A folder that counts as a git repository (a `.git` folder is all git and ripgrep look for)."""
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    return root


@pytest.fixture
def ctx(repo: Path) -> ToolContext:
    return ToolContext(LocalWorkspace(repo))
