"""`agentcli mcp list`: every configured server, connected to (when approved) to list its tools.

    demo · user · stdio · connected
      python demo_server.py
      from /home/me/.agentcli/mcp.json
      tools: echo, shout, get_weather_ (listed as "get weather!")
    github · local · http · needs login
      https://api.example.com/mcp
      from /home/me/.claude.json
      login: not logged in
      needs you to log in: run `agentcli mcp login github` (...)
    Permission rules name a server's tools as shown: mcp__SERVER__TOOL, or mcp__SERVER for all of them.

The servers are those a session in this directory would have (`SessionServers`): the
enabled plugins' and the same files (with `--mcp-config` and `--strict-mcp-config` as a
session takes them), approvals and connect timeout; none is asked about, and all are stopped
before the report is printed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from agentcli.mcp.approval import ENABLE_ALL_KEY, ENABLED_KEY
from agentcli.mcp.auth_store import AuthStore, login_label
from agentcli.mcp.listing import RULES_HINT, server_label, tool_listing
from agentcli.mcp.names import server_parts
from agentcli.mcp.servers import SessionServers
from agentcli.mcp.status import ServerStatus
from agentcli.permissions.sources import resolve_mode
from agentcli.plugins.enabled import active_plugins
from agentcli.settings import load_settings
from agentcli.tools.paths import shown

NO_SERVERS = (
    "No MCP servers configured. Add one with `agentcli mcp add NAME -- COMMAND [ARGS...]` "
    "or `agentcli mcp add --transport http NAME URL`."
)
NONE_USABLE = "No MCP server can be used: the notices above say why and what to rename."
NEEDS_APPROVAL = (
    f"start agentcli (the REPL) to be asked, or add it to {ENABLED_KEY} "
    f"(or set {ENABLE_ALL_KEY}: true) in .agentcli/settings.local.json"
)


def server_report(
    cwd: Path, flag_files: Sequence[Path] = (), strict: bool = False, plugin_dirs: Sequence[Path] = ()
) -> tuple[str, list[str]]:
    """The report, and the notices met on the way (files or servers skipped). `flag_files`,
    `strict` and `plugin_dirs` are `--mcp-config`, `--strict-mcp-config` and `--plugin-dir`, as a
    session takes them."""
    notices: list[str] = []
    settings = load_settings(cwd)
    mode = resolve_mode(None, settings)
    plugins = active_plugins(settings, folders=plugin_dirs).plugins  # what it says about them, a session says
    servers = SessionServers(
        settings,
        cwd,
        flag_files,
        strict,
        mode=lambda: mode,
        local_settings=None,
        ask=None,
        on_notice=notices.append,
        plugins=plugins,
    )
    try:
        if servers.manager is None:
            return (NONE_USABLE if servers.refused else NO_SERVERS), notices
        servers.start()
        servers.manager.wait_for_connections(servers.timeout_s)
        statuses = servers.manager.statuses()
        store = servers.manager.auth_store
    finally:
        servers.close()
    parts, _ = server_parts(status.name for status in statuses)
    lines = [line for status in statuses for line in _lines(status, parts, store, cwd)]
    if any(status.state == "connected" for status in statuses):
        lines.append(RULES_HINT)
    return "\n".join(lines), notices


def _lines(status: ServerStatus, parts: Mapping[str, str], store: AuthStore, cwd: Path) -> list[str]:
    config = status.config
    state = "failed" if status.state == "connecting" else status.state  # timed out while closing
    label = server_label(status, parts)
    lines = [
        f"{label} · {config.origin or config.scope} · {config.transport} · {state}",
        f"  {config.target}",
        f"  from {shown(config.source, cwd)}",
    ]
    if config.logs_in:
        lines.append(f"  login: {login_label(config, store)}")
    listing = tool_listing(status, parts)
    if listing is not None:
        lines.append(f"  tools: {listing.tools}")
        lines.extend(f'  left out: "{tool.name}": {tool.why}' for tool in listing.left_out)
    elif status.state == "needs approval":
        lines.append(f"  {NEEDS_APPROVAL}")
    elif status.error:
        lines.append(f"  {status.error}")
    return lines
