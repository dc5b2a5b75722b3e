"""Claude Code's `~/.claude.json` (`$CLAUDE_CONFIG_DIR/.claude.json` when that is set): the MCP
servers `claude mcp add` keeps there, read as the user's own configuration.

Claude Code writes user-scope servers at the top level (`mcpServers`) and local-scope ones, this
project's only, under `projects["/abs/path"].mcpServers`, the project being the folder it was
started in (matched as given and with symlinks resolved). The file is Claude Code's state and
grows large (history, caches, many unrelated keys): only those keys are looked at, each taken
only when it has the expected shape. A file that cannot be read as a JSON object is skipped
whole with one notice; a key of the wrong shape with one notice naming it; a missing file
silently.

Per-project approvals of `.mcp.json` servers are kept there too. Only the user's refusals
(`disabledMcpjsonServers`) are taken (`disabled`): declining more is always safe. Approvals
(`enabledMcpjsonServers`, `enableAllProjectMcpServers`) are not: they name servers, not what a
server runs, and the repository's `.mcp.json` may have changed since the user said yes in
Claude Code, so honouring them would let a repository start new programs on an old answer.
They are kept as `approved_elsewhere`, for agentcli to say why it still asks.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentcli.mcp.config_file import read_config_file

FILE_NAME = ".claude.json"
MAX_BYTES = 64 << 20
"""Claude Code's state file holds history too: far larger than an MCP config may be."""
SERVERS_KEY = "mcpServers"


def claude_json_path() -> Path:
    """Where Claude Code keeps the file: `$CLAUDE_CONFIG_DIR/.claude.json`, else `~/.claude.json`."""
    return Path(os.environ.get("CLAUDE_CONFIG_DIR") or Path.home()) / FILE_NAME


@dataclass(frozen=True)
class ClaudeJson:
    """What agentcli takes from the file (empty when it is missing or skipped)."""

    path: Path
    user_servers: Mapping[str, object] = field(default_factory=dict)
    local_servers: Mapping[str, object] = field(default_factory=dict)
    """This project's (`projects[<project>].mcpServers`)."""
    disabled: frozenset[str] = frozenset()
    """This project's `.mcp.json` servers the user refused in Claude Code: never started."""
    approved_elsewhere: frozenset[str] = frozenset()
    """Those the user approved in Claude Code (`"*"`: all of them): not taken, see the docstring."""
    notices: tuple[str, ...] = ()

    def approved_there(self, name: str) -> bool:
        """Did the user approve this project's `.mcp.json` server `name` in Claude Code?"""
        return name in self.approved_elsewhere or "*" in self.approved_elsewhere


def read_claude_json(cwd: Path, path: Path | None = None) -> ClaudeJson:
    """The servers and refusals of Claude Code's file for the project at `cwd`; never raises."""
    path = claude_json_path() if path is None else path
    try:
        data = read_config_file(path, MAX_BYTES)
    except FileNotFoundError:
        return ClaudeJson(path)
    except ValueError as error:
        return ClaudeJson(path, notices=(f"Skipped Claude Code's {path} (its MCP servers): {error}",))
    notices: list[str] = []
    user_servers = _servers(data, path, SERVERS_KEY, notices)
    project = _project(data, cwd, path, notices)
    local_servers = _servers(project, path, f"projects[{str(cwd)!r}].{SERVERS_KEY}", notices)
    approved = set(_names(project.get("enabledMcpjsonServers")))
    if project.get("enableAllProjectMcpServers") is True:
        approved.add("*")
    return ClaudeJson(
        path,
        user_servers,
        local_servers,
        frozenset(_names(project.get("disabledMcpjsonServers"))),
        frozenset(approved),
        tuple(notices),
    )


def _project(data: dict[str, Any], cwd: Path, path: Path, notices: list[str]) -> dict[str, Any]:
    projects = data.get("projects", {})
    if not isinstance(projects, dict):
        notices.append(f'Skipped "projects" in Claude Code\'s {path}: it is not an object.')
        return {}
    for key in dict.fromkeys((str(cwd), str(cwd.resolve()))):
        project = projects.get(key)
        if isinstance(project, dict):
            return project
    return {}


def _servers(data: dict[str, Any], path: Path, where: str, notices: list[str]) -> Mapping[str, object]:
    servers = data.get(SERVERS_KEY, {})
    if not isinstance(servers, dict):
        notices.append(f"Skipped {where} in Claude Code's {path}: it is not an object of servers by name.")
        return {}
    return servers


def _names(value: object) -> list[str]:
    return [item for item in value if isinstance(item, str)] if isinstance(value, list) else []
