"""Approved rules are saved to settings.local.json atomically, keeping what was there."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentcli.errors import UsageError
from agentcli.permissions.persist import add_allow_rules


def test_creates_the_file_and_folder(tmp_path: Path) -> None:
    path = tmp_path / ".agentcli" / "settings.local.json"
    assert add_allow_rules(path, ["Bash(ls:*)"]) == ["Bash(ls:*)"]
    assert json.loads(path.read_text()) == {"permissions": {"allow": ["Bash(ls:*)"]}}
    assert [p.name for p in path.parent.iterdir()] == ["settings.local.json"]  # no temp or lock files left


def test_keeps_other_keys_and_skips_duplicates(tmp_path: Path) -> None:
    path = tmp_path / "settings.local.json"
    path.write_text(json.dumps({"model": "x", "permissions": {"deny": ["Bash(rm:*)"], "allow": ["Bash(ls:*)"]}}))
    assert add_allow_rules(path, ["Bash(ls:*)", "Bash(pwd)", "Bash(pwd)"]) == ["Bash(pwd)"]
    assert json.loads(path.read_text()) == {
        "model": "x",
        "permissions": {"deny": ["Bash(rm:*)"], "allow": ["Bash(ls:*)", "Bash(pwd)"]},
    }


def test_a_malformed_file_is_left_alone(tmp_path: Path) -> None:
    path = tmp_path / "settings.local.json"
    path.write_text('{"permissions": {"allow": "Bash"}}')
    with pytest.raises(UsageError, match=r"permissions\.allow must be a list"):
        add_allow_rules(path, ["Bash(ls:*)"])
    path.write_text("{not json")
    with pytest.raises(UsageError, match="not valid JSON"):
        add_allow_rules(path, ["Bash(ls:*)"])
    assert path.read_text() == "{not json"
