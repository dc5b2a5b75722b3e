"""What one tool call declares it will do: the description the permission gate judges.

Every tool answers `Tool.access(input, ctx)` for each call with an `Access`: the paths it
reads, the paths it writes, the shell command it runs, the network hosts it contacts, the
MCP server it acts through; or `NOTHING` (it touches nothing outside the conversation: Task,
TodoWrite, Skill). The gate judges that declaration, never the tool's name, and so do the
workspace's wrappers (a checkpoint before a change, a sandbox around a command).

A tool that cannot say what a call does declares it `unknown` (the default of
`tools.base.BuiltinTool`): such a call is judged as able to do anything. The gate asks about
it (and, where nobody can be asked, denies it), plan mode refuses it, and no mode approves it
but bypassPermissions. So a new tool that forgets to declare fails closed.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Access:
    """What a call declares. Fields left empty are promises: a call that declares no writes writes nothing."""

    reads: tuple[Path, ...] = ()
    """Absolute paths it reads (a file, or a folder it searches)."""
    writes: tuple[Path, ...] = ()
    """Absolute paths it creates or changes."""
    command: str | None = None
    """A shell command it runs (which may do anything the command does)."""
    hosts: tuple[str, ...] = ()
    """Network hosts it contacts."""
    server: str | None = None
    """An MCP server it acts through: what the server does is out of agentcli's sight."""
    server_read_only: bool = False
    """The server says this tool changes nothing (its `readOnlyHint`)."""
    unknown: str = ""
    """Why what the call does is not known; non-empty makes the call able to do anything."""

    @property
    def read_only(self) -> bool:
        """True when the call changes nothing: no writes, no command, nothing unknown, and any
        server it acts through says the tool only reads (plan mode lets such calls run)."""
        server_changes = self.server is not None and not self.server_read_only
        return not (self.writes or self.command is not None or self.unknown or server_changes)


NOTHING = Access()
"""Touches nothing outside the conversation's own state (Task: its sub-agent's calls are judged
one by one; TodoWrite; Skill: its `!` commands are judged as Bash calls)."""


def unknown(why: str) -> Access:
    """The access of a call whose effects are not known: judged as able to do anything."""
    return Access(unknown=why)
