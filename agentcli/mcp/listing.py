"""How `/mcp` and `agentcli mcp list` name a server's tools: as the model is offered them and as
permission rules name them (`agentcli.mcp.names`), with the tools left out and why.

    server_label(status, parts)   # `my.server (mcp__my_server)`: the part rules use, when it differs
    tool_listing(status, parts)   # .tools: `echo, get_weather_ (listed as "get weather!")`; .left_out
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from agentcli.mcp.names import PREFIX, SEPARATOR, Refused
from agentcli.mcp.status import ServerStatus
from agentcli.mcp.tools import usable_tools

RULES_HINT = "Permission rules name a server's tools as shown: mcp__SERVER__TOOL, or mcp__SERVER for all of them."


def server_label(status: ServerStatus, parts: Mapping[str, str]) -> str:
    """The server's name, and the name its tools go by when that is not the same."""
    part = parts.get(status.name, status.name)
    return status.name if part == status.name else f"{status.name} ({PREFIX}{part})"


@dataclass(frozen=True)
class ToolListing:
    tools: str
    """The tools by the names rules use, each rewritten one with the name it is listed under:
    `echo, get_weather_ (listed as "get weather!")`, or `(none)`."""
    left_out: tuple[Refused, ...]


def tool_listing(status: ServerStatus, parts: Mapping[str, str]) -> ToolListing | None:
    """A connected server's tools as offered, and those left out; None for a server not connected."""
    part = parts.get(status.name)
    if status.state != "connected" or part is None:
        return None
    usable, left_out = usable_tools(status, part)
    shown = [_shown(named.name.removeprefix(f"{PREFIX}{part}{SEPARATOR}"), named.info.name) for named, _ in usable]
    return ToolListing(", ".join(shown) or "(none)", tuple(left_out))


def _shown(offered: str, listed: str) -> str:
    return offered if offered == listed else f'{offered} (listed as "{listed}")'
