"""Tool sources: where an agent's tools come from.

An agent is offered the tools of its sources, source by source in the order given, each
source's in its own order (so the manifest stays byte-stable and the prompt cache hits):

- `builtin_source()`: Read, Write, Edit, Bash, Grep, Glob;
- the session's own tools, Skill and TodoWrite (`SessionContext.tool_source`): they act on
  the conversation's state, so each conversation has its own;
- the Task tool (`agents.task`);
- the MCP servers' tools (`agentcli.mcp.tools.McpToolSource`): empty until the conversation's
  first request fixes them (`Session.tools_ready`), so the manifest stays the same after.

A source only supplies `Tool`s; what the gate needs to judge a call is declared by the tool
itself (`access`: what each call does; `concurrency`), wherever it came from.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Protocol

from agentcli.contracts import Tool
from agentcli.tools.registry import ToolRegistry

BUILTIN = "builtin"
SESSION = "session"


class ToolSource(Protocol):
    """Contributes tools to an agent."""

    @property
    def name(self) -> str:
        """Who contributes them, for messages: `builtin`, `session`, `task`, `mcp`."""
        ...

    def tools(self) -> Sequence[Tool]:
        """The tools, in the order the model is to be offered them."""
        ...


@dataclass(frozen=True)
class ToolList:
    """A fixed list of tools as a source (the built-ins, the session's own, a test's)."""

    name: str
    items: tuple[Tool, ...]

    def tools(self) -> Sequence[Tool]:
        return self.items


def builtin_source() -> ToolList:
    """Every built-in tool (`agentcli.tools.builtin_tools`), in manifest order."""
    from agentcli.tools import builtin_tools

    return ToolList(BUILTIN, tuple(builtin_tools()))


def collect_tools(sources: Sequence[ToolSource], only: Collection[str] | None = None) -> ToolRegistry:
    """The tools of `sources` in order; with `only`, just the tools of those names (in the
    sources' order, not `only`'s). Raises ValueError for a name two sources both supply, or a
    name in `only` that none does (the message lists what there is)."""
    registry = ToolRegistry()
    supplied_by: dict[str, str] = {}
    for source in sources:
        for tool in source.tools():
            if tool.name in supplied_by:
                raise ValueError(
                    f"Both the {supplied_by[tool.name]} and the {source.name} tools have a tool named {tool.name!r}; "
                    "an agent's tools must have distinct names."
                )
            supplied_by[tool.name] = source.name
            if only is None or tool.name in only:
                registry.register(tool)
    if only is not None and (missing := [name for name in only if name not in supplied_by]):
        raise ValueError(f"No tool named {', '.join(missing)}; the tools are: {', '.join(supplied_by)}.")
    return registry
