"""Logging in to and out of a remote MCP server, for `/mcp login|logout` and `agentcli mcp login|logout`.

    status = log_in(manager, "github", show=print, paste_from=sys.stdin.fileno())
    print(login_result(status, manager.auth_store))
    print(log_out(manager, "github"))

`log_in` replaces the server's tokens with a new login (its client registration is kept, and
its callback port reused, so the registration stays valid), connects it through a
`BrowserLogin` and waits until it is connected or has failed. Meanwhile a line typed on
`paste_from` (a terminal) is taken as the address the browser ended on: over SSH the browser's
redirect to 127.0.0.1 cannot reach agentcli, so the user pastes it. Ctrl-C stops the login.
"""

from __future__ import annotations

import os
import select
from collections.abc import Callable

from agentcli.mcp.auth_store import AuthStore
from agentcli.mcp.login import POLL_S, BrowserLogin, LoginFailed
from agentcli.mcp.manager import McpManager
from agentcli.mcp.status import ServerStatus
from agentcli.safe_text import for_terminal

STOP_WAIT_S = 10.0


def log_in(
    manager: McpManager,
    name: str,
    show: Callable[[str], None],
    paste_from: int | None,
    open_browser: Callable[[str], bool] | None = None,
) -> ServerStatus:
    """Log `name` in and connect it; its status afterwards. `open_browser` opens the address
    (default: `login.open_in_browser`). Raises KeyError for an unknown server, LoginFailed when
    it cannot be logged in to (a stdio server, one with its own Authorization header, a callback
    port in use), KeyboardInterrupt after stopping the login on Ctrl-C. What it shows is safe to
    print (addresses and answers come from the servers)."""

    def say(line: str) -> None:
        show(for_terminal(line))

    config = manager.status(name).config
    if not config.logs_in:
        what = "a stdio server" if config.transport == "stdio" else "configured with its own Authorization header"
        raise LoginFailed(f'MCP server "{name}" is {what}: there is nothing to log in to')
    store = manager.auth_store
    port = config.oauth_callback_port or store.registered_port(config.url)
    try:
        login = BrowserLogin(name, say, port=port, open_browser=open_browser)
    except LoginFailed:
        if config.oauth_callback_port:
            raise
        login = BrowserLogin(name, say, open_browser=open_browser)  # the registered port is taken: register anew
    store.update(config.url, tokens=None, expires_at=None)
    try:
        manager.connect(name, login)
        while (status := manager.wait_for(name, POLL_S)).state == "connecting":
            pasted = _line(paste_from)
            if pasted:
                say(login.paste(pasted))
        return status
    except KeyboardInterrupt:
        login.cancel()
        manager.wait_for(name, STOP_WAIT_S)
        raise
    finally:
        login.close()


def login_result(status: ServerStatus, store: AuthStore) -> str:
    """One line on how `log_in` went."""
    if status.state == "connected":
        if store.state(status.config.url) == "not logged in":
            return f'MCP server "{status.name}" did not ask for a login; it is connected ({len(status.tools)} tools).'
        return f'Logged in to MCP server "{status.name}"; it is connected ({len(status.tools)} tools).'
    return for_terminal(f'MCP server "{status.name}" is {status.state}: {status.error}')


def log_out(manager: McpManager, name: str) -> str:
    """Forget `name`'s login; the line saying so. Raises KeyError for an unknown server."""
    if manager.logout(name):
        return f'Logged out of MCP server "{name}": its tokens and client registration are deleted.'
    return f'There was no login for MCP server "{name}".'


def _line(fd: int | None) -> str:
    """A line typed on `fd` within the poll interval ("" for none). A terminal in its usual mode
    hands over whole lines only."""
    if fd is None or not os.isatty(fd):
        return ""
    ready, _, _ = select.select([fd], [], [], 0)
    if not ready:
        return ""
    return os.read(fd, 65536).decode("utf-8", "replace").strip()
