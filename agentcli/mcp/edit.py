"""Adding and removing servers in an MCP config file (`agentcli mcp add|remove`).

A write keeps every other key and server of the file and writes it back readable (JSON with an
indent of 2), atomically: a concurrent reader never sees half a file. A file that cannot be
read as a config is left alone, with an error saying what to fix. Nothing here expands
`${VAR}`: the file keeps what the user wrote, expanded each time it is read.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agentcli.mcp.config_file import read_config_file
from agentcli.permissions.persist import write_json_atomically

SERVERS_KEY = "mcpServers"


class ConfigEditError(Exception):
    """The change was not made; the message says why and what to do."""


def server_names(path: Path) -> list[str]:
    """The names of the servers in `path` (none when there is no file)."""
    return list(_servers(_load(path), path))


def add_server(path: Path, name: str, entry: dict[str, Any], *, how_to_replace: str) -> None:
    """Add `entry` as server `name` to `path` (created when missing). Refuses a name already
    there; `how_to_replace` is the command that removes it, quoted in the error."""
    data = _load(path)
    servers = _servers(data, path)
    if name in servers:
        raise ConfigEditError(
            f'An MCP server "{name}" is already in {path}; remove it first ({how_to_replace}) or choose another name.'
        )
    servers[name] = entry
    data[SERVERS_KEY] = servers
    _write(path, data)


def remove_server(path: Path, name: str) -> bool:
    """Remove server `name` from `path`; False when it is not there."""
    data = _load(path)
    servers = _servers(data, path)
    if name not in servers:
        return False
    del servers[name]
    _write(path, data)
    return True


def _load(path: Path) -> dict[str, Any]:
    try:
        return read_config_file(path)
    except FileNotFoundError:
        return {}
    except ValueError as error:
        raise ConfigEditError(f"Cannot change {path}: {error} Fix it by hand, then run the command again.") from None


def _servers(data: dict[str, Any], path: Path) -> dict[str, Any]:
    servers = data.get(SERVERS_KEY, {})
    if not isinstance(servers, dict):
        raise ConfigEditError(
            f'Cannot change {path}: "{SERVERS_KEY}" is not an object of servers by name; fix it by hand.'
        )
    return servers


def _write(path: Path, data: dict[str, Any]) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_json_atomically(path, data)
    except OSError as error:
        raise ConfigEditError(f"Cannot write {path}: {error.strerror or error}.") from None
