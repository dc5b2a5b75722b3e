"""The session's workspace: the local one, or the sandboxed one when the sandbox is on.

`session_workspace` starts the sandbox when `sandbox.enabled` (or `--sandbox`) asks for it.
When it cannot start, a notice says why and how to fix it in one line, and the session goes
on with the local workspace, where every command goes through the usual permission questions;
with `sandbox.failIfUnavailable` the session does not start at all. Never is a command that
the sandbox would have held run unsandboxed without the gate's usual judgment.

`SandboxStatus` is what `/sandbox` shows: whether it is on, what it allows, and what is
missing to turn it on.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Collection
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from agentcli.errors import AgentcliError, UsageError
from agentcli.permissions.bash_rules import deny_match
from agentcli.permissions.rules import SESSION, RuleError, parse_rule
from agentcli.settings import agentcli_home
from agentcli.workspace.contract import Workspace
from agentcli.workspace.local import LocalWorkspace
from agentcli.workspace.sandbox_settings import SandboxSettings

if TYPE_CHECKING:  # the sandbox's modules load only when it is on
    from agentcli.workspace.network import AsksAboutHost
    from agentcli.workspace.sandboxed import SandboxedWorkspace


class SandboxRequired(AgentcliError):
    """The sandbox cannot start and `sandbox.failIfUnavailable` says not to go on without it."""


@dataclass(frozen=True)
class SandboxStatus:
    """The sandbox of a session, for /sandbox."""

    settings: SandboxSettings
    workspace: SandboxedWorkspace | None = None
    """The sandboxed workspace, when the sandbox runs."""
    unavailable: str | None = None
    """Why the sandbox could not start, when it was asked for."""

    @property
    def active(self) -> bool:
        return self.workspace is not None


def session_workspace(
    cwd: Path,
    settings: SandboxSettings,
    opened: ExitStack,
    *,
    passthrough: Collection[str],
    ask_host: AsksAboutHost,
    notice: Callable[[str], None],
) -> tuple[Workspace, SandboxStatus]:
    """The workspace of a session at `cwd`, entered on `opened` (see the module's docstring).
    Raises SandboxRequired when the sandbox is required and cannot start, UsageError for a
    malformed `excludedCommands` entry."""
    if not settings.enabled:
        return opened.enter_context(LocalWorkspace(cwd, passthrough=passthrough)), SandboxStatus(settings)
    from agentcli.workspace.sandboxed import SandboxedWorkspace, SandboxUnavailable

    sandboxed = SandboxedWorkspace(
        cwd,
        settings,
        passthrough=passthrough,
        ask_host=ask_host,
        excluded=excluded_matcher(settings.excluded_commands),
        homes=tool_homes(),
    )
    try:
        workspace = opened.enter_context(sandboxed)
    except SandboxUnavailable as error:
        if settings.fail_if_unavailable:
            raise SandboxRequired(
                f"The sandbox cannot start: {error}. sandbox.failIfUnavailable is set, so agentcli does not run "
                "without it."
            ) from None
        notice(
            f"The sandbox is off for this session: {error}. Commands are asked about as usual "
            "(set sandbox.failIfUnavailable to stop instead)."
        )
        local = opened.enter_context(LocalWorkspace(cwd, passthrough=passthrough))
        return local, SandboxStatus(settings, unavailable=str(error))
    return workspace, SandboxStatus(settings, workspace)


def tool_homes() -> list[Path]:
    """agentcli's home folder and Claude Code's (hidden from sandboxed commands)."""
    homes = [agentcli_home()]
    if claude := os.environ.get("CLAUDE_CONFIG_DIR"):
        homes.append(Path(claude))
    return homes


def excluded_matcher(entries: Collection[str]) -> Callable[[str], bool]:
    """Whether a shell command certainly runs one of `entries` (`sandbox.excludedCommands`, each a
    Bash rule pattern; a bare `docker` means `docker` with any arguments). A command that cannot
    be analysed stays in the sandbox. Raises UsageError for an entry that is not a valid pattern."""
    patterns = []
    for entry in entries:
        text = entry if "*" in entry else f"{entry}:*"
        try:
            rule = parse_rule(f"Bash({text})", "allow", SESSION)
        except RuleError as error:
            raise UsageError(f"sandbox.excludedCommands: {entry!r} is not a valid command pattern ({error}).") from None
        if rule.bash is not None:
            patterns.append(rule.bash)

    def excluded(command: str) -> bool:
        for pattern in patterns:
            match = deny_match(command, pattern)
            if match is not None and match.unverified is None:
                return True
        return False

    return excluded


def describe(status: SandboxStatus) -> list[str]:
    """What /sandbox shows, line by line."""
    from agentcli.workspace import bwrap

    settings = status.settings
    if status.workspace is None:
        lines = ["The sandbox is off: commands run on this machine, asked about as the permission rules say."]
        if status.unavailable:
            lines.append(f"It was asked for ({settings.enabled_by}) but cannot start: {status.unavailable}.")
        elif (missing := bwrap.unavailable()) is not None:
            lines.append(f"To turn it on, first: {missing}.")
        else:
            lines.append(
                'To turn it on: "sandbox": {"enabled": true} in .agentcli/settings.local.json or '
                "$AGENTCLI_HOME/settings.json, or agentcli --sandbox for one session."
            )
        return lines
    layout = status.workspace.layout
    approval = (
        "run without a question unless a deny or ask rule catches them"
        if settings.auto_allow
        else "are asked about as the permission rules say"
    )
    lines = [
        f"The sandbox is on ({settings.enabled_by}): the agent's commands run in it (bubblewrap) and {approval}.",
    ]
    if layout is not None:
        lines.append(f"Writable: {', '.join(str(p) for p in layout.writable)} and a private /tmp.")
        lines.append(
            "Read-only even there: .git/hooks, .git/config, agentcli's and Claude Code's configuration, "
            "skills and commands, .mcp.json, editor and package-manager settings"
            + (f", {', '.join(str(p) for p in layout.read_only)}" if layout.read_only else "")
            + "."
        )
        lines.append(f"Hidden: {', '.join(_home_relative(p) for p in layout.hidden) or 'nothing'}.")
        if layout.unresolved:
            lines.append(f"Not found, so not mounted: {', '.join(layout.unresolved)}.")
    open_hosts = status.workspace.policy.allowed()
    lines.append(
        f"Network: only through agentcli's proxy, to {', '.join(open_hosts) if open_hosts else 'no host yet'}; "
        "any other host is asked about the first time a command needs it (refused in agentcli run)."
    )
    if settings.excluded_commands:
        lines.append(f"Run outside it (asked as usual): {', '.join(settings.excluded_commands)}.")
    lines.append(
        "The model may ask to leave it for a command (you are asked each time)."
        if settings.allow_unsandboxed
        else "The model cannot leave it (sandbox.allowUnsandboxedCommands is off)."
    )
    if settings.allow_unix_sockets:
        lines.append("Unix sockets are open to commands (sandbox.network.allowAllUnixSockets).")
    elif layout is not None and layout.sockets:
        lines.append(
            f"Unix sockets commands may connect to: {', '.join(_home_relative(p) for p in layout.sockets)} "
            "(sandbox.network.allowUnixSockets; with it, stream sockets are allowed, so a socket elsewhere "
            "that is visible inside and that you may write is reachable too)."
        )
    return lines


def _home_relative(path: Path) -> str:
    home = Path.home()
    return f"~/{path.relative_to(home)}" if home in path.parents else str(path)
