"""The `statusLine` setting, as Claude Code writes it::

    {"statusLine": {"type": "command", "command": "~/.claude/statusline.sh", "padding": 0}}

The most specific settings file that sets it wins (as for any key). It is read leniently: a
field agentcli does not know (`refreshInterval`) is skipped with one notice; a value it cannot
use (not an object, another `type`, no command, a `padding` out of range) leaves the REPL
without a status line, with one notice naming the file. The command is a `HookCommand` of the
event `STATUS_EVENT`, so it runs as a hook does (`hooks.runner`) and a checked-in one is put to
the user with the project's hooks (`hooks.trust`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentcli.bounds import Range
from agentcli.hooks.config import HookCommand
from agentcli.setting_keys import setting
from agentcli.settings import Settings

STATUS_LINE_SETTING = setting("statusLine")
STATUS_EVENT = "StatusLine"
"""The command's event name where hooks are listed (the trust question)."""
TIMEOUT_S = 5.0
"""A command still running after this long is killed; the line it showed before stays."""
FIELDS = frozenset({"type", "command", "padding"})
PADDING = Range("spaces", high=200, whole=True)


@dataclass(frozen=True)
class StatusLineCommand:
    command: HookCommand
    padding: int = 0
    """Spaces before the line."""


def status_line_command(settings: Settings, notify: Callable[[str], None]) -> StatusLineCommand | None:
    """The status line the settings configure (None: none, or one that cannot be used, said in `notify`)."""
    for scope, path, data in reversed(settings.raw):
        if STATUS_LINE_SETTING in data:
            return _read(data[STATUS_LINE_SETTING], scope, path, notify)
    return None


def _read(value: Any, scope: str, path: Path, notify: Callable[[str], None]) -> StatusLineCommand | None:
    if value is None:
        return None
    problem = _problem(value)
    if problem:
        notify(f"No status line: statusLine in {path} {problem}.")
        return None
    if unknown := sorted(set(value) - FIELDS):
        notify(f"Skipped in statusLine of {path}: {', '.join(unknown)} (not known to agentcli). The status line runs.")
    command = HookCommand(STATUS_EVENT, "", value["command"], TIMEOUT_S, path, scope)
    return StatusLineCommand(command, value.get("padding", 0))


def _problem(value: Any) -> str:
    if not isinstance(value, dict):
        return 'must be an object like {"type": "command", "command": "~/.claude/statusline.sh"}'
    if value.get("type", "command") != "command":
        return f'has type {value["type"]!r}: agentcli runs only "command" status lines'
    command = value.get("command")
    if not isinstance(command, str) or not command.strip():
        return "has no command (the shell command whose output is shown)"
    if "padding" in value and not PADDING.holds(value["padding"]):
        return f"has a padding that is not {PADDING.describe()}"
    return ""
