"""`agentcli mcp login NAME` and `agentcli mcp logout NAME`: a remote server's OAuth login, from a shell.

    agentcli mcp login github                 prints the address to open (and opens the browser if
                                              there is one), waits for the browser to come back,
                                              connects: "Logged in to MCP server "github"; ..."
    agentcli mcp login corp --client-secret   for a client registered by hand (`oauth.clientId`):
                                              its secret from MCP_CLIENT_SECRET, or asked for
    agentcli mcp logout github                deletes its tokens and client registration

The servers are those a session in this directory has (`--mcp-config`, `--strict-mcp-config`
as a session takes them); a project server must be approved first, as for starting it. Over
SSH, open the address on any machine and paste here the address the browser ended on (its
redirect to 127.0.0.1 cannot reach this one). Exit 0 when logged in (or out), 1 otherwise,
130 when stopped with Ctrl-C.
"""

from __future__ import annotations

import getpass
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from agentcli.cli.commands import echo
from agentcli.mcp.approval import approval_state
from agentcli.mcp.auth_store import default_store
from agentcli.mcp.config import load_servers
from agentcli.output.streams import write_err
from agentcli.permissions.sources import resolve_mode
from agentcli.safe_text import for_terminal
from agentcli.settings import load_settings

SECRET_ENV = "MCP_CLIENT_SECRET"
NOT_APPROVED = (
    'MCP server "{name}" is a project server not approved yet: start agentcli (the REPL) to be asked, or add it '
    "to enabledMcpjsonServers in .agentcli/settings.local.json, then log in."
)


def login(cwd: Path, name: str, flag_files: Sequence[Path], strict: bool, client_secret: bool) -> int:
    from agentcli.mcp.login import LoginFailed
    from agentcli.mcp.login_flow import log_in, login_result
    from agentcli.mcp.servers import SessionServers

    settings = load_settings(cwd)
    mode = resolve_mode(None, settings)
    servers = SessionServers(
        settings, cwd, flag_files, strict, mode=lambda: mode, local_settings=None, ask=None, on_notice=_err
    )
    try:
        manager = servers.manager
        if manager is None or name not in {status.name for status in manager.statuses()}:
            return _fail(f'No MCP server "{name}"; `agentcli mcp list` shows the configured ones.')
        config = manager.status(name).config
        if approval_state(config, settings, mode) != "approved":
            return _fail(NOT_APPROVED.format(name=name))
        if client_secret:
            if not config.oauth_client_id:
                return _fail(
                    f'--client-secret is for a client registered by hand: give MCP server "{name}" an '
                    '"oauth": {"clientId": "..."} first.'
                )
            secret = os.environ.get(SECRET_ENV) or getpass.getpass(f"Client secret of {config.oauth_client_id}: ")
            manager.auth_store.update(config.url, client_secret=secret)
        try:
            status = log_in(manager, name, _say, paste_from=_terminal())
        except LoginFailed as error:
            return _fail(for_terminal(f"{error}."))
        except KeyboardInterrupt:
            write_err(sys.stderr, f"Stopped logging in to {name}.")
            return 130
        said = login_result(status, manager.auth_store)
        if status.state != "connected":
            return _fail(said)
        return echo(said)
    finally:
        servers.close()


def logout(cwd: Path, name: str, flag_files: Sequence[Path], strict: bool) -> int:
    found = load_servers(cwd, flag_files, strict=strict)
    config = found.servers.get(name)
    if config is None:
        return _fail(f'No MCP server "{name}"; `agentcli mcp list` shows the configured ones.')
    if config.transport == "stdio":
        return _fail(f'MCP server "{name}" is a stdio server: there is no login to forget.')
    if default_store().forget(config.url):
        return echo(f'Logged out of MCP server "{name}": its tokens and client registration are deleted.')
    return echo(f'There was no login for MCP server "{name}".')


def _terminal() -> int | None:
    return sys.stdin.fileno() if sys.stdin.isatty() else None


def _say(line: str) -> None:
    echo(line)


def _err(text: str) -> None:
    write_err(sys.stderr, text)


def _fail(message: str) -> int:
    write_err(sys.stderr, f"Error: {message}")
    return 1
