"""Which project servers (`.mcp.json`) may start: a checked-in file can start programs.

A project server starts only when one of these says so, in this order:

1. `disabledMcpjsonServers: [name]` in the user's or local settings, or for this project in
   Claude Code's `~/.claude.json`: never (until removed);
2. `enabledMcpjsonServers: [name]` or `enableAllProjectMcpServers: true` there: yes; but when
   the approval was given through agentcli (the REPL's question, `agentcli mcp add`), it is
   pinned to what the server runs (`enabledMcpjsonServerDigests`: name → digest of its entry as
   written), and a server whose entry changed since is asked about again (`changed`): a
   repository cannot swap the program behind a name the user said yes to. A name the user wrote
   into `enabledMcpjsonServers` by hand, with no digest, is honoured as written;
3. `--permission-mode bypassPermissions` (or that mode from settings): yes;
4. otherwise the REPL asks once per server and saves the answer to
   `.agentcli/settings.local.json`; `agentcli run` has nobody to ask and leaves it out, saying
   how to enable it.

Only the user's own files count (`settings.OWN_KEYS`): the checked-in `.agentcli/settings.json`
comes with the repository, so it cannot approve the repository's own servers. Claude Code's
approvals in `~/.claude.json` (`enabledMcpjsonServers`, `enableAllProjectMcpServers` per project)
are not taken either: they name servers, not what they run, and the `.mcp.json` may have changed
since (`agentcli.mcp.claude_json`); the question and the notice say the user approved them there.
User-level, local (`~/.claude.json`) and `--mcp-config` servers are the user's own and are
always trusted.

The question shows everything the server will be given (`what_it_gets`): command and
arguments, or URL and headers, and its environment variables, as the file writes them (a
variable by its name, never its value), and which credentials are withheld from it.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Collection
from pathlib import Path
from typing import Any, Literal, Protocol

from agentcli.mcp.config import ServerConfig
from agentcli.permissions.persist import update_settings
from agentcli.setting_keys import setting
from agentcli.settings import OWN_SCOPES, Settings

ENABLE_ALL_KEY = setting("enableAllProjectMcpServers")
ENABLED_KEY = setting("enabledMcpjsonServers")
DISABLED_KEY = setting("disabledMcpjsonServers")
DIGESTS_KEY = setting("enabledMcpjsonServerDigests")

Approval = Literal["approved", "disabled", "changed", "undecided"]
"""`changed`: approved when it ran something else; asked about again as if undecided."""


class AsksAboutProjectServer(Protocol):
    def __call__(self, server: ServerConfig, /) -> bool:
        """Ask once whether the project's server `server` may start; True for yes."""
        ...


def approval_state(
    server: ServerConfig, settings: Settings, mode: str, refused_elsewhere: Collection[str] = ()
) -> Approval:
    """Whether `server` may start now, by the rules of the module's docstring (before asking);
    `refused_elsewhere`: the project servers the user refused in Claude Code."""
    if server.scope != "project":
        return "approved"
    own = [data for scope, _, data in settings.raw if scope in OWN_SCOPES]
    if server.name in refused_elsewhere or any(server.name in _names(data.get(DISABLED_KEY)) for data in own):
        return "disabled"
    if any(data.get(ENABLE_ALL_KEY) is True for data in own):
        return "approved"
    pins = [_digests(data).get(server.name) for data in own if server.name in _names(data.get(ENABLED_KEY))]
    if pins:
        return "approved" if None in pins or server_digest(server) in pins else "changed"
    return "approved" if mode == "bypassPermissions" else "undecided"


def server_digest(server: ServerConfig) -> str:
    """What `server` runs or connects to, as its file writes it (variables unexpanded), as a digest:
    the same entry always gives the same one, any change to its program, arguments, environment,
    address or headers another."""
    shown = server.shown
    written = [server.transport, shown.command, list(shown.args), dict(shown.env), shown.url, dict(shown.headers)]
    text = json.dumps(written, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def remember_approval(local_settings: Path, server: ServerConfig, approved: bool) -> None:
    """Save the user's answer for the project server `server`, a yes pinned to what it runs now
    (raises OSError or UsageError)."""
    name = server.name
    keep, drop = (ENABLED_KEY, DISABLED_KEY) if approved else (DISABLED_KEY, ENABLED_KEY)

    def change(data: dict[str, Any]) -> None:
        kept = _names(data.get(keep))
        data[keep] = kept if name in kept else [*kept, name]
        if drop in data:
            data[drop] = [other for other in _names(data.get(drop)) if other != name]
        digests = _digests(data)
        if approved:
            digests[name] = server_digest(server)
        else:
            digests.pop(name, None)
        if digests:
            data[DIGESTS_KEY] = digests
        else:
            data.pop(DIGESTS_KEY, None)

    update_settings(local_settings, change)


def what_it_gets(server: ServerConfig) -> list[tuple[str, str]]:
    """(label, text) lines of everything `server` is given, as its file writes them."""
    shown = server.shown
    lines: list[tuple[str, str]] = []
    if server.transport == "stdio":
        lines.append(("runs", server.target))
        lines.extend(("env", f"{name}={value}") for name, value in shown.env.items())
    else:
        lines.append((f"connects ({server.transport}) to", server.target))
        lines.extend(("header", f"{name}: {value}") for name, value in shown.headers.items())
    if server.withheld:
        names = ", ".join(server.withheld)
        lines.append(("withheld", f"{names}: agentcli's credentials, given an empty value"))
    return lines


def how_to_enable(names: list[str], approved_in_claude: list[str] | None = None) -> str:
    """The one-line notice for project servers left out because nobody approved them;
    `approved_in_claude`: those of them the user approved in Claude Code."""
    listed = ", ".join(f'"{name}"' for name in names)
    notice = (
        f"Not started: the MCP server{'s' if len(names) > 1 else ''} {listed} of this project's .mcp.json, "
        f"not approved yet. Start agentcli (the REPL) to be asked, or add them to {ENABLED_KEY} "
        f"(or set {ENABLE_ALL_KEY}: true) in .agentcli/settings.local.json."
    )
    if approved_in_claude:
        notice += f" {claude_approval_note(approved_in_claude)}"
    return notice


def claude_approval_note(names: list[str]) -> str:
    """Why a server the user approved in Claude Code is asked about (or left out) all the same."""
    listed = ", ".join(f'"{name}"' for name in names)
    return (
        f"You approved {listed} in Claude Code (~/.claude.json); that is not carried over, since the "
        ".mcp.json may have changed what it runs since."
    )


def _digests(data: dict[str, Any]) -> dict[str, str]:
    value = data.get(DIGESTS_KEY)
    if not isinstance(value, dict):
        return {}
    return {name: digest for name, digest in value.items() if isinstance(digest, str)}


def _names(value: object) -> list[str]:
    return [item for item in value if isinstance(item, str)] if isinstance(value, list) else []
