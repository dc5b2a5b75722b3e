"""Helpers shared by the tool tests."""

from __future__ import annotations

import shutil
from collections.abc import Mapping
from pathlib import Path

import pytest

from agentcli.contracts import JSON, Tool, ToolContext, ToolResult
from agentcli.tools.schema import validation_error

HAVE_RG = shutil.which("rg") is not None
needs_rg = pytest.mark.skipif(not HAVE_RG, reason="ripgrep (rg) is not installed; the ripgrep path cannot be tested")


def call(tool: Tool, ctx: ToolContext, tool_input: JSON) -> ToolResult:
    """Run a tool the way the executor does: the input must fit the tool's schema first."""
    error = validation_error(tool_input, tool.input_schema)
    assert error is None, error
    return tool.run(tool_input, ctx)


def write(root: Path, files: Mapping[str, str | bytes]) -> None:
    """Create files (and their folders) under `root`; str content is written as UTF-8 bytes."""
    for name, content in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
