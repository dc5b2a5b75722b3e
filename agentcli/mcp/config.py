"""Which MCP servers there are: `.mcp.json` (project), `$AGENTCLI_HOME/mcp.json` (user), `--mcp-config FILE`.

Every file holds `{"mcpServers": {NAME: SERVER, ...}}`, SERVER being one of

    {"command": "npx", "args": ["-y", "pkg"], "env": {"KEY": "${KEY}"}}      stdio ("type": "stdio" optional)
    {"type": "http", "url": "https://host/mcp", "headers": {"Authorization": "Bearer ${TOKEN}"}}
    {"type": "sse", "url": "https://host/sse", "headers": {...}}              older servers

`${VAR}` and `${VAR:-default}` are expanded in command, args, env, url and headers
(`agentcli.expansion`); in the project's `.mcp.json` never into one of agentcli's credentials
unless the user's own `subprocessEnvPassthrough` names it (one notice says what was withheld).
What is shown (`ServerConfig.shown`: the approval question, `mcp list`, errors) is the file's
text, variables unexpanded, so no value of the user's environment is ever printed.

A remote server without an `Authorization` header is logged in to with OAuth when it asks
(`agentcli mcp login NAME`); `"oauth": {"clientId": "...", "callbackPort": 8080}` names a client
registered with its authorization server by hand, and the port its redirect URI has. A server
named in several files is taken from the last one read: user, then project, then each
`--mcp-config` in order; with `--strict-mcp-config` only the `--mcp-config` files are read. A
file that cannot be used is skipped as a whole, a server that cannot be used on its own, each
with a notice naming the file and saying what to fix; nothing here raises.

Project servers come from a checked-in file that can start programs: they run only once
approved (`agentcli.mcp.approval`). User and `--mcp-config` servers are the user's own.

An enabled plugin's servers (`plugins.manifest`: its `.mcp.json` or `mcpServers`) are named
`plugin:PLUGIN:SERVER` (tools `mcp__plugin_PLUGIN_SERVER__…`) and read before the user's file.
The user approved them when they installed or enabled the plugin, which showed what each runs;
the plugin comes from someone else, so its `${VAR}`s are expanded as a project's are (never into
a credential the user did not let through), with `${CLAUDE_PLUGIN_ROOT}` the plugin's folder,
also set in a stdio server's environment.
"""

from __future__ import annotations

import json
import os
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from agentcli.bounds import JSON_DIGITS
from agentcli.expansion import Expander, conceal, withheld_notice
from agentcli.plugins.manifest import ROOT_VARIABLE, Plugin
from agentcli.regular_file import NotRegularFile, read_regular_file
from agentcli.settings import agentcli_home

Scope = Literal["project", "user", "flag", "plugin"]
Transport = Literal["stdio", "http", "sse"]
TRANSPORTS: tuple[Transport, ...] = ("stdio", "http", "sse")
PROJECT_FILE = ".mcp.json"
USER_FILE = "mcp.json"
MAX_CONFIG_BYTES = 1 << 20


@dataclass(frozen=True)
class AsWritten:
    """A server's settings as its file writes them, variables unexpanded: what the user is shown."""

    command: str = ""
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    url: str = ""
    headers: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class ServerConfig:
    """One server as configured, variables expanded."""

    name: str
    scope: Scope
    source: Path
    """The file it came from."""
    transport: Transport
    command: str = ""
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    url: str = ""
    headers: Mapping[str, str] = field(default_factory=dict)
    oauth_client_id: str = ""
    """A client registered by hand with the server's authorization server (`oauth.clientId`);
    empty: agentcli registers itself (dynamic client registration)."""
    oauth_callback_port: int = 0
    """The port of the login's redirect URI (`oauth.callbackPort`); 0: any free one."""
    written: AsWritten | None = None
    """As the file writes it; None when it has no variables (built here, not read from a file)."""
    origin: str = ""
    """`plugin NAME@MKT` for a plugin's server."""
    withheld: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """The credential variables it asked for and does not get, each with where it asked (`env.KEY`)."""
    used: Mapping[str, str] = field(default_factory=dict, repr=False)
    """The variables expanded into it, and their values."""

    @property
    def logs_in(self) -> bool:
        """A remote server that brings no `Authorization` header: it may ask for an OAuth login."""
        return self.transport != "stdio" and not any(key.lower() == "authorization" for key in self.headers)

    @property
    def shown(self) -> AsWritten:
        """What to show of it: as written, never an expanded value."""
        if self.written is not None:
            return self.written
        return AsWritten(self.command, self.args, self.env, self.url, self.headers)

    @property
    def target(self) -> str:
        """What it runs or where it connects, on one line (for `mcp list` and messages), as written."""
        shown = self.shown
        if self.transport == "stdio":
            return " ".join([shown.command, *shown.args])
        return shown.url

    def conceal(self, text: str) -> str:
        """`text` (an error, what the server said) with the values of its variables shown by name."""
        return conceal(text, self.used)


@dataclass
class ServerSet:
    servers: dict[str, ServerConfig] = field(default_factory=dict)
    """By name, in the order first configured."""
    notices: list[str] = field(default_factory=list)
    """Files and servers skipped, and why."""


def config_files(cwd: Path, flag_files: Sequence[Path], strict: bool) -> list[tuple[Scope, Path]]:
    """(scope, path) of every file to read, lowest precedence first."""
    flags: list[tuple[Scope, Path]] = [("flag", cwd / path) for path in flag_files]
    if strict:
        return flags
    return [("user", agentcli_home() / USER_FILE), ("project", cwd / PROJECT_FILE), *flags]


def load_servers(
    cwd: Path,
    flag_files: Sequence[Path] = (),
    *,
    strict: bool = False,
    environ: Mapping[str, str] | None = None,
    allowed: Collection[str] = (),
    plugins: Sequence[Plugin] = (),
) -> ServerSet:
    """The servers of every configuration file (see the module's docstring). A `--mcp-config`
    file that does not exist is reported; a missing user or project file is not. `allowed`: the
    credential variables the user lets the project's file expand (`subprocessEnvPassthrough`);
    `plugins`: the enabled plugins (left out with `strict`)."""
    environ = os.environ if environ is None else environ
    found = ServerSet()
    if not strict:
        for plugin in plugins:
            add_plugin_servers(found, plugin, environ, allowed)
    for scope, path in config_files(cwd, flag_files, strict):
        try:
            data = read_config_file(path)
        except FileNotFoundError:
            if scope == "flag":
                found.notices.append(f"Skipped MCP config {path}: no such file.")
            continue
        except ValueError as error:
            found.notices.append(f"Skipped MCP config {path}: {error}")
            continue
        servers = data.get("mcpServers", {})
        if not isinstance(servers, dict):
            found.notices.append(f'Skipped MCP config {path}: "mcpServers" must be an object of servers by name.')
            continue
        withheld: dict[str, list[str]] = {}
        for name, spec in servers.items():
            try:
                server = parse_server(
                    name, spec, scope, path, Expander(environ, checked_in=scope == "project", allowed=allowed)
                )
            except ValueError as error:
                found.notices.append(f'Skipped MCP server "{name}" in {path}: {error}')
                continue
            found.servers[name] = server
            for variable, places in server.withheld.items():
                withheld.setdefault(variable, []).append(f'server "{name}": {", ".join(places)}')
        if withheld:
            found.notices.append(withheld_notice(path, withheld))
    return found


def add_plugin_servers(
    found: ServerSet, plugin: Plugin, environ: Mapping[str, str], allowed: Collection[str] = ()
) -> None:
    """Add `plugin`'s servers to `found` (see the module's docstring)."""
    root = str(plugin.root)
    with_root = {**environ, ROOT_VARIABLE: root}
    for path, servers in plugin.mcp_servers:
        withheld: dict[str, list[str]] = {}
        for own_name, spec in servers.items():
            name = f"plugin:{plugin.name}:{own_name}"
            try:
                server = parse_server(name, spec, "plugin", path, Expander(with_root, checked_in=True, allowed=allowed))
            except ValueError as error:
                found.notices.append(f'Skipped MCP server "{own_name}" of {plugin.label} ({path}): {error}')
                continue
            if server.transport == "stdio":
                server = replace(server, env={ROOT_VARIABLE: root, **server.env})
            found.servers[name] = replace(server, origin=plugin.label)
            for variable, places in server.withheld.items():
                withheld.setdefault(variable, []).append(f'server "{own_name}": {", ".join(places)}')
        if withheld:
            found.notices.append(withheld_notice(path, withheld))


def parse_server(name: str, spec: object, scope: Scope, source: Path, expand: Expander) -> ServerConfig:
    """One server's entry, its variables expanded by `expand`; raises ValueError saying what to fix."""
    if not name:
        raise ValueError("a server needs a name.")
    if not isinstance(spec, dict):
        raise ValueError("a server must be an object with a command (stdio) or a type and url (http, sse).")
    kind = spec.get("type", "stdio" if "command" in spec else None)
    if kind not in TRANSPORTS:
        raise ValueError(f'"type" must be one of {", ".join(TRANSPORTS)} (stdio needs a "command"), not {kind!r}.')
    if kind == "stdio":
        written = AsWritten(
            command=_string(spec, "command"), args=tuple(_strings(spec, "args")), env=_string_map(spec, "env")
        )
        command = expand(written.command, "command")
        if not command:
            raise ValueError('"command" is empty; give the program that starts the server.')
        args = tuple(expand(arg, "args") for arg in written.args)
        env = {key: expand(value, f"env.{key}") for key, value in written.env.items()}
        return ServerConfig(
            name,
            scope,
            source,
            "stdio",
            command=command,
            args=args,
            env=env,
            written=written,
            withheld=expand.frozen_withheld(),
            used=dict(expand.used),
        )
    written = AsWritten(url=_string(spec, "url"), headers=_string_map(spec, "headers"))
    url = expand(written.url, "url")
    if not url.startswith(("http://", "https://")):
        raise ValueError(f'"url" must be an http:// or https:// address, not {written.url!r}.')
    # stripped: a withheld variable leaves `Bearer `, which HTTP refuses (surrounding spaces never count)
    headers = {key: expand(value, f"headers.{key}").strip() for key, value in written.headers.items()}
    client_id, port = _oauth(spec)
    return ServerConfig(
        name,
        scope,
        source,
        kind,
        url=url,
        headers=headers,
        oauth_client_id=client_id,
        oauth_callback_port=port,
        written=written,
        withheld=expand.frozen_withheld(),
        used=dict(expand.used),
    )


def _oauth(spec: dict[str, Any]) -> tuple[str, int]:
    """`oauth.clientId` and `oauth.callbackPort` (Claude Code's other `oauth` keys are ignored)."""
    oauth = spec.get("oauth", {})
    if not isinstance(oauth, dict):
        raise ValueError('"oauth" must be an object, e.g. {"clientId": "...", "callbackPort": 8080}.')
    client_id = oauth.get("clientId", "")
    if not isinstance(client_id, str):
        raise ValueError('"oauth.clientId" must be a string.')
    port = oauth.get("callbackPort", 0)
    if isinstance(port, bool) or not isinstance(port, int) or not 0 <= port <= 65535:
        raise ValueError('"oauth.callbackPort" must be a port number (1 to 65535).')
    return client_id, port


def read_config_file(path: Path) -> dict[str, Any]:
    """The JSON object of the MCP config `path`; raises FileNotFoundError, or ValueError saying what to fix."""
    try:
        raw = read_regular_file(path, MAX_CONFIG_BYTES + 1)
    except NotRegularFile as error:
        raise ValueError(f"{error.strerror or error}.") from None
    except FileNotFoundError:
        raise
    except OSError as error:
        raise ValueError(f"{error.strerror or error}.") from None
    if len(raw) > MAX_CONFIG_BYTES:
        raise ValueError(f"over {MAX_CONFIG_BYTES:,} bytes; MCP configs are small JSON.")
    try:
        data = json.loads(raw.decode("utf-8")) if raw.strip() else {}
    except UnicodeDecodeError:
        raise ValueError("not UTF-8 text; save it as UTF-8.") from None
    except json.JSONDecodeError as error:
        raise ValueError(f"not valid JSON (line {error.lineno}, column {error.colno}): {error.msg}.") from None
    except ValueError:  # valid JSON that Python will not read
        raise ValueError(f"it holds a number of more than {JSON_DIGITS:,} digits.") from None
    if not isinstance(data, dict):
        raise ValueError('it must hold a JSON object: {"mcpServers": {...}}.')
    return data


def _string(spec: dict[str, Any], key: str) -> str:
    value = spec.get(key, "")
    if not isinstance(value, str):
        raise ValueError(f'"{key}" must be a string.')
    return value


def _strings(spec: dict[str, Any], key: str) -> list[str]:
    value = spec.get(key, [])
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ValueError(f'"{key}" must be a list of strings.')
    return value


def _string_map(spec: dict[str, Any], key: str) -> dict[str, str]:
    value = spec.get(key, {})
    if not isinstance(value, dict) or not all(isinstance(item, str) for item in value.values()):
        raise ValueError(f'"{key}" must be an object of strings.')
    return value
