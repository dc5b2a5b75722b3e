"""`agentcli mcp list|add|remove`: the MCP servers of this project and of the user.

    agentcli mcp list                                   each server: scope, transport, status, tools
                                                        (--mcp-config FILE, --strict-mcp-config: as a session)
    agentcli mcp add NAME -- COMMAND [ARGS...]          a stdio server (--env K=V, repeatable)
    agentcli mcp add --transport http NAME URL          an http (or sse) server (--header 'K: V')
    agentcli mcp remove NAME                            (--scope when both files have it)
    agentcli mcp login NAME                             log in to a remote server (OAuth, in the browser)
    agentcli mcp logout NAME                            forget its login

`--scope project` (the default) writes `.mcp.json`, `--scope user` `$AGENTCLI_HOME/mcp.json`.
A project server added here is the user's own choice, so it is also approved in
`.agentcli/settings.local.json` (`enabledMcpjsonServers`). `list` connects to every approved
server to report its tools, waiting at most the connect timeout (`MCP_TIMEOUT`); it never
asks about a project server, it says how to approve it.

Not on the fast path: typer reads these (`agentcli.cli.app` adds this sub-app).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from agentcli.cli.commands import echo
from agentcli.cli.options import MCP_CONFIG, PLUGIN_DIR, STRICT_MCP_CONFIG
from agentcli.cli.shared import Subcommand
from agentcli.mcp.claude_json import read_claude_json
from agentcli.mcp.config import PROJECT_FILE, TRANSPORTS, USER_FILE, Transport, parse_server
from agentcli.mcp.edit import ConfigEditError, add_server, remove_server, server_names
from agentcli.mcp.names import RENAME, server_parts
from agentcli.output.streams import write_err
from agentcli.settings import agentcli_home

SCOPES = ("project", "user")

mcp_app = typer.Typer(
    name="mcp",
    help="List, add and remove MCP servers (.mcp.json for the project, $AGENTCLI_HOME/mcp.json for you); "
    "log in to and out of remote ones.",
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)

McpConfigOption = Annotated[
    list[str] | None, typer.Option(*MCP_CONFIG.flags, metavar=MCP_CONFIG.metavar, help=MCP_CONFIG.help)
]
StrictOption = Annotated[bool, typer.Option(*STRICT_MCP_CONFIG.flags, help=STRICT_MCP_CONFIG.help)]
PluginDirOption = Annotated[
    list[str] | None, typer.Option(*PLUGIN_DIR.flags, metavar=PLUGIN_DIR.metavar, help=PLUGIN_DIR.help)
]
ScopeOption = Annotated[
    str, typer.Option("--scope", "-s", help="project (.mcp.json) or user ($AGENTCLI_HOME/mcp.json).")
]


def _config_path(scope: str) -> Path:
    if scope not in SCOPES:
        raise typer.BadParameter(f"{scope!r} is not one of {', '.join(SCOPES)}.", param_hint="--scope")
    return Path.cwd() / PROJECT_FILE if scope == "project" else agentcli_home() / USER_FILE


def _fail(message: str) -> typer.Exit:
    write_err(sys.stderr, f"Error: {message}")
    return typer.Exit(1)


@mcp_app.command("list", cls=Subcommand)
def list_command(
    mcp_config: McpConfigOption = None, strict_mcp_config: StrictOption = False, plugin_dirs: PluginDirOption = None
) -> None:
    """Each server: scope, transport, status (connected, failed, needs login, needs approval, disabled), login
    and tools."""
    from agentcli.cli.mcp_list import server_report
    from agentcli.safe_text import for_terminal

    report, notices = server_report(
        Path.cwd(),
        [Path(file) for file in mcp_config or []],
        strict_mcp_config,
        [Path(folder) for folder in plugin_dirs or []],
    )
    for notice in notices:
        write_err(sys.stderr, for_terminal(notice))
    raise typer.Exit(echo(for_terminal(report)))  # names and errors come from the servers


@mcp_app.command("add", cls=Subcommand, no_args_is_help=True)
def add_command(
    name: Annotated[str, typer.Argument(metavar="NAME", help="The server's name (tools become mcp__NAME__tool).")],
    target: Annotated[
        list[str], typer.Argument(metavar="COMMAND [ARGS...] | URL", help="After `--`: what starts it; or its URL.")
    ],
    transport: Annotated[str, typer.Option("--transport", "-t", help="stdio (default), http or sse.")] = "stdio",
    scope: ScopeOption = "project",
    header: Annotated[
        list[str] | None, typer.Option("--header", "-H", metavar="'KEY: VALUE'", help="An HTTP header (repeatable).")
    ] = None,
    env: Annotated[
        list[str] | None,
        typer.Option("--env", "-e", metavar="KEY=VALUE", help="A variable for the program (repeatable)."),
    ] = None,
) -> None:
    """Add a server: `agentcli mcp add NAME -- COMMAND [ARGS...]` or `agentcli mcp add --transport http NAME URL`."""
    path = _config_path(scope)
    entry = _entry(name, _transport(transport), target, header or [], env or [])
    try:
        add_server(path, name, entry, how_to_replace=f"agentcli mcp remove {name} --scope {scope}")
    except ConfigEditError as error:
        raise _fail(str(error)) from None
    said = f'Added MCP server "{name}" ({transport}) to {path}.'
    if scope == "project":
        said += _approve(name, entry, path)
    raise typer.Exit(echo(said))


@mcp_app.command("remove", cls=Subcommand, no_args_is_help=True)
def remove_command(
    name: Annotated[str, typer.Argument(metavar="NAME", help="The server to remove.")],
    scope: Annotated[
        str | None, typer.Option("--scope", "-s", help="project or user (needed only when both have NAME).")
    ] = None,
) -> None:
    """Remove a server from .mcp.json or $AGENTCLI_HOME/mcp.json."""
    scopes = [scope] if scope is not None else list(SCOPES)
    try:
        holding = [each for each in scopes if name in server_names(_config_path(each))]
        if len(holding) > 1:
            raise _fail(
                f'"{name}" is in both .mcp.json and {agentcli_home() / USER_FILE}; '
                "say which with --scope project or --scope user."
            )
        if not holding:
            where = " or ".join(str(_config_path(each)) for each in scopes)
            claude = read_claude_json(Path.cwd())
            if name in claude.user_servers or name in claude.local_servers:
                raise _fail(
                    f'MCP server "{name}" is Claude Code\'s, in {claude.path}, which agentcli only reads: '
                    f"remove it with `claude mcp remove {name}`."
                )
            raise _fail(f'No MCP server "{name}" in {where}; `agentcli mcp list` shows the configured ones.')
        path = _config_path(holding[0])
        remove_server(path, name)
    except ConfigEditError as error:
        raise _fail(str(error)) from None
    raise typer.Exit(echo(f'Removed MCP server "{name}" from {path}.'))


@mcp_app.command("login", cls=Subcommand, no_args_is_help=True)
def login_command(
    name: Annotated[str, typer.Argument(metavar="NAME", help="The remote server to log in to.")],
    client_secret: Annotated[
        bool,
        typer.Option(
            "--client-secret",
            help="For a client registered by hand (oauth.clientId): keep its secret, from MCP_CLIENT_SECRET or asked.",
        ),
    ] = False,
    mcp_config: McpConfigOption = None,
    strict_mcp_config: StrictOption = False,
) -> None:
    """Log in to a remote server (OAuth): open the address shown, allow agentcli, and it connects."""
    from agentcli.cli.mcp_login import login

    flag_files = [Path(file) for file in mcp_config or []]
    raise typer.Exit(login(Path.cwd(), name, flag_files, strict_mcp_config, client_secret))


@mcp_app.command("logout", cls=Subcommand, no_args_is_help=True)
def logout_command(
    name: Annotated[str, typer.Argument(metavar="NAME", help="The remote server to log out of.")],
    mcp_config: McpConfigOption = None,
    strict_mcp_config: StrictOption = False,
) -> None:
    """Forget a remote server's login: its tokens and client registration are deleted."""
    from agentcli.cli.mcp_login import logout

    raise typer.Exit(logout(Path.cwd(), name, [Path(file) for file in mcp_config or []], strict_mcp_config))


def _transport(value: str) -> Transport:
    if value not in TRANSPORTS:
        raise typer.BadParameter(f"{value!r} is not one of {', '.join(TRANSPORTS)}.", param_hint="--transport")
    return value


def _entry(name: str, transport: Transport, target: list[str], headers: list[str], env: list[str]) -> dict[str, Any]:
    """The `mcpServers` entry the options describe; a usage error (exit 2) for what does not fit."""
    if not name.strip():
        raise typer.BadParameter("give the server a name.", param_hint="NAME")
    _, refused = server_parts([name])
    if refused:
        raise typer.BadParameter(f"{refused[0].why}; choose another name: {RENAME}.", param_hint="NAME")
    if transport == "stdio":
        if headers:
            raise typer.BadParameter(
                "headers are for --transport http or sse; a stdio server takes --env.", param_hint="--header"
            )
        entry: dict[str, Any] = {"command": target[0], "args": target[1:]}
        if env:
            entry["env"] = dict(_pair(item, "=", "--env", "KEY=VALUE") for item in env)
        return entry
    if env:
        raise typer.BadParameter(
            f"--env is for stdio servers; an {transport} server takes --header.", param_hint="--env"
        )
    if len(target) != 1:
        raise typer.BadParameter(f"an {transport} server takes one URL, e.g. https://host/mcp.", param_hint="URL")
    url = target[0]
    if not url.startswith(("http://", "https://", "${")):
        raise typer.BadParameter(f"{url!r} is not an http:// or https:// address.", param_hint="URL")
    entry = {"type": transport, "url": url}
    if headers:
        entry["headers"] = dict(_pair(item, ":", "--header", "'KEY: VALUE'") for item in headers)
    return entry


def _pair(item: str, separator: str, flag: str, form: str) -> tuple[str, str]:
    key, found, value = item.partition(separator)
    if not found or not key.strip():
        raise typer.BadParameter(f"{item!r} is not {form}.", param_hint=flag)
    return key.strip(), value.strip() if separator == ":" else value


def _approve(name: str, entry: dict[str, Any], path: Path) -> str:
    """Approve the project server the user just added, as written in `path`; the sentence saying
    so (or why not)."""
    from agentcli.errors import UsageError
    from agentcli.expansion import Expander
    from agentcli.mcp.approval import remember_approval

    local = Path.cwd() / ".agentcli" / "settings.local.json"
    try:
        server = parse_server(name, entry, "project", path, Expander(os.environ, checked_in=True))
        remember_approval(local, server, approved=True)
    except (OSError, UsageError, ValueError) as error:
        return f" Could not approve it in {local} ({error}); agentcli will ask before starting it."
    return f" Approved for you in {local} (enabledMcpjsonServers); others who check out .mcp.json are asked."
