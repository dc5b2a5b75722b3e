"""The names MCP tools go by: what the model is offered, what `/mcp`, `agentcli mcp list` and the
permission question show, and what permission rules name. One scheme, the same every time:

    mcp__<server>__<tool>

- `<server>` is the server's name as configured, each character outside `[A-Za-z0-9_-]` replaced
  by `_` (as Claude Code does: a plugin's server `plugin:NAME:SERVER` is `plugin_NAME_SERVER`).
  When that is over 32 characters, the name offered holds its first 23 (less a `_` they end in),
  `_` and 8 hex digits of the SHA-256 of the configured name, so the tool part keeps at least 25
  of the API's 64; rules name such a server by either (`full_server_part`). `__` separates server
  from tool, so a server whose name would then hold `__`, begin or end with `_`, or read as another
  server's does (either of its names), is refused: it is not started, and a notice says to rename
  it. Then the server part of a name is what stands between `mcp__` and the next `__`, and a rule
  `mcp__trusted` can only ever mean the server `trusted` (never one named `trusted__evil`).
- `<tool>` is the tool's name as the server lists it, each character outside `[A-Za-z0-9_-]`
  replaced by `_`. When the whole name would be over the API's 64 characters, the tool part is cut
  and ends in `_` and 8 hex digits of the SHA-256 of the listed name. A tool whose name had to be
  rewritten and then reads as another tool's of the same server (`delete.repo` beside
  `delete_repo`), or that has no name, is refused with a notice: the model never sees it, so a
  rule written for the name shown always means the one tool shown under it.

Nothing depends on the order in which servers or tools are listed, so a tool keeps its name from
one session to the next. Rules also name a shortened tool by its full listed name
(`agentcli.permissions.rules`).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from agentcli.mcp.status import ToolInfo

K = TypeVar("K")
PREFIX = "mcp__"
SEPARATOR = "__"
MAX_NAME = 64
MAX_SERVER = 32
"""Characters of a server's part as offered: the tool part always keeps at least 25."""
HASH_DIGITS = 8
NAME_PATTERN = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
_UNSAFE = re.compile(r"[^a-zA-Z0-9_-]")
RENAME = 'letters, digits, "-" and "_", with no "_" at either end nor two in a row'


def safe_part(text: str) -> str:
    """`text` with every character the API refuses in a tool name replaced by `_`."""
    return _UNSAFE.sub("_", text)


def split_name(name: str) -> tuple[str, str] | None:
    """`mcp__srv__a__b` → ("srv", "a__b"), `mcp__srv` → ("srv", ""); None when not an MCP tool's name.
    The server part ends at the first `__` after `mcp__` (no server part holds one)."""
    if not name.startswith(PREFIX):
        return None
    server, _, tool = name[len(PREFIX) :].partition(SEPARATOR)
    return server, tool


@dataclass(frozen=True)
class Refused:
    """A server or tool left out, and why (a clause: `its name ...`)."""

    name: str
    why: str


def server_parts(names: Iterable[str]) -> tuple[dict[str, str], list[Refused]]:
    """The part each server's tools are offered under (`mcp__<part>__…`), by server name, and the
    servers refused (see the module's docstring)."""
    full: dict[str, str] = {}
    refused: list[Refused] = []
    for name in names:
        part = full_server_part(name)
        if not part or part.startswith("_") or part.endswith("_") or SEPARATOR in part:
            shown = f"{PREFIX}{part}{SEPARATOR}TOOL"
            refused.append(Refused(name, f'its tools would be named "{shown}", where "__" separates server from tool'))
        else:
            full[name] = part
    offered = {name: _offered_server_part(name, part) for name, part in full.items()}
    # A shortened server answers to both its names: neither may be another server's.
    spellings: dict[tuple[str, bool], str] = {(name, False): part for name, part in full.items()}
    spellings.update({(name, True): part for name, part in offered.items() if part != full[name]})
    clashes = _clashes(spellings, verbatim={(name, False) for name, part in full.items() if name == part})
    clashing: dict[str, str] = {}
    for (name, _), (other, _) in clashes.items():
        clashing.setdefault(name, other)
    for name, other in clashing.items():
        refused.append(
            Refused(
                name, f'its tools would be named "{PREFIX}{offered[name]}{SEPARATOR}TOOL", as those of "{other}" are'
            )
        )
    return {name: part for name, part in offered.items() if name not in clashing}, refused


def full_server_part(name: str) -> str:
    """The server part of the names of `name`'s tools before any shortening, as Claude Code names
    them (`plugin:NAME:SERVER` → `plugin_NAME_SERVER`): rules written for it name the server."""
    return safe_part(name)


def claude_code_name(server: str, tool: str) -> str:
    """The name Claude Code gives the tool `tool` of the server `server`, never shortened (its
    hooks' matchers and its rules name it so): `mcp__<full server part>__<tool>`."""
    return f"{PREFIX}{full_server_part(server)}{SEPARATOR}{safe_part(tool)}"


def _offered_server_part(name: str, part: str) -> str:
    if len(part) <= MAX_SERVER:
        return part
    digest = hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:HASH_DIGITS]
    return f"{part[: MAX_SERVER - HASH_DIGITS - 1].rstrip('_')}_{digest}"


@dataclass(frozen=True)
class OfferedName:
    """A tool and the name it is offered under."""

    name: str
    info: ToolInfo


def tool_names(server_part: str, tools: Sequence[ToolInfo]) -> tuple[list[OfferedName], list[Refused]]:
    """The name of each tool of the server whose part is `server_part`, and the tools refused
    (see the module's docstring); both in the order listed."""
    room = MAX_NAME - len(PREFIX) - len(server_part) - len(SEPARATOR)
    parts = {index: _tool_part(info.name, room) for index, info in enumerate(tools) if info.name}
    clashes = _clashes(parts, verbatim={index for index, part in parts.items() if part == tools[index].name})
    offered: list[OfferedName] = []
    refused: list[Refused] = []
    for index, info in enumerate(tools):
        name = f"{PREFIX}{server_part}{SEPARATOR}{parts.get(index, '')}"
        other = clashes.get(index)
        if index not in parts:
            refused.append(Refused(info.name, "it has no name"))
        elif other is None:
            offered.append(OfferedName(name, info))
        elif tools[other].name == info.name:
            refused.append(Refused(info.name, "the server lists two tools of that name"))
        else:
            refused.append(Refused(info.name, f'it would be offered as "{name}", as the tool "{tools[other].name}" is'))
    return offered, refused


def _tool_part(tool: str, room: int) -> str:
    part = safe_part(tool)
    if len(part) <= room:
        return part
    digest = hashlib.sha256(tool.encode("utf-8", "surrogatepass")).hexdigest()[:HASH_DIGITS]
    return f"{part[: room - HASH_DIGITS - 1]}_{digest}"


def _clashes(names: dict[K, str], verbatim: Collection[K]) -> dict[K, K]:
    """The keys whose name is another key's too, each with another key of that name. Where just one
    key of a name needed no rewriting (`verbatim`), it keeps the name and is not among them."""
    by_name: dict[str, list[K]] = {}
    for key, name in names.items():
        by_name.setdefault(name, []).append(key)
    clashes: dict[K, K] = {}
    for keys in by_name.values():
        if len(keys) < 2:
            continue
        keepers = [key for key in keys if key in verbatim]
        keeper = keepers[0] if len(keepers) == 1 else None
        for key in keys:
            if key != keeper:
                clashes[key] = keeper if keeper is not None else next(k for k in keys if k != key)
    return clashes
