"""The tool manifest the model sees: names and parameters as in Claude Code, lean, byte-stable."""

from __future__ import annotations

import json

from agentcli.tools import builtin_tools

TOKEN_BUDGET = 2_000
"""Estimated tokens (JSON characters / 4) for all six tools; the issue's ceiling is 4,000."""


def test_names_and_parameters_follow_claude_code() -> None:
    schemas = {tool["name"]: tool["input_schema"] for tool in builtin_tools().manifest()}
    assert {name: sorted(schema["properties"]) for name, schema in schemas.items()} == {
        "Read": ["file_path", "limit", "offset"],
        "Write": ["content", "file_path"],
        "Edit": ["file_path", "new_string", "old_string", "replace_all"],
        "Bash": ["command", "description", "timeout"],
        "Grep": sorted(
            ["pattern", "path", "glob", "type", "output_mode", "-i", "-n", "-A", "-B", "-C", "head_limit", "multiline"]
        ),
        "Glob": ["path", "pattern"],
    }
    assert {name: schema["required"] for name, schema in schemas.items()} == {
        "Read": ["file_path"],
        "Write": ["file_path", "content"],
        "Edit": ["file_path", "old_string", "new_string"],
        "Bash": ["command"],
        "Grep": ["pattern"],
        "Glob": ["pattern"],
    }


def test_manifest_is_lean() -> None:
    size = len(json.dumps(builtin_tools().manifest(), separators=(",", ":")))
    assert size / 4 < TOKEN_BUDGET, f"manifest is about {size // 4} tokens"


def test_manifest_is_byte_stable() -> None:
    assert json.dumps(builtin_tools().manifest()) == json.dumps(builtin_tools().manifest())


def test_descriptions_state_the_behaviour_the_model_relies_on() -> None:
    described = {tool["name"]: tool["description"] for tool in builtin_tools().manifest()}
    assert "do NOT persist" in described["Bash"]
    assert "600000" in described["Bash"] and "120000" in described["Bash"]
    assert "Read" in described["Edit"] and "replace_all" in described["Edit"]
    assert "Read it" in described["Write"]
    assert "offset" in described["Read"]
    assert ".gitignore" in described["Grep"] and ".gitignore" in described["Glob"]
