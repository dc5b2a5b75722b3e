"""Which tools a sub-agent is offered: what there is, less its definition's `disallowedTools`,
narrowed to its `tools` (as Claude Code resolves them: the denylist first, then the allowlist
against what is left; a tool in both is out).

An entry names a tool exactly, or an MCP server's tools (`mcp__github`, `mcp__github__*`), or in
`disallowedTools` every MCP tool (`mcp__*`). A `tools` entry naming nothing there is (a tool
agentcli does not have, `WebSearch`, or a misspelling) is left out and reported
(`ToolChoice.unknown`); when no entry names anything, the sub-agent cannot start.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

MCP = "mcp__"


@dataclass(frozen=True)
class ToolChoice:
    names: tuple[str, ...]
    """The tools it is offered, in the order there is."""
    unknown: tuple[str, ...] = ()
    """`tools` entries that name no tool there is."""


def choose_tools(available: Sequence[str], tools: Sequence[str] | None, disallowed: Sequence[str] = ()) -> ToolChoice:
    pool = [name for name in available if not any(_names(entry, name) for entry in disallowed)]
    if tools is None:
        return ToolChoice(tuple(pool))
    unknown = tuple(entry for entry in tools if not any(_names(entry, name) for name in available))
    chosen = tuple(name for name in pool if any(_names(entry, name) for entry in tools))
    return ToolChoice(chosen, unknown)


def _names(entry: str, tool: str) -> bool:
    if entry == tool:
        return True
    if entry == f"{MCP}*":
        return tool.startswith(MCP)
    if (entry.startswith(MCP) and entry.count("__") == 1) or entry.endswith("__*"):
        server = entry.removesuffix("__*")
        return tool.startswith(f"{server}__")
    return False
