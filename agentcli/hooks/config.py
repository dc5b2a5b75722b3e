"""Hook configuration: the `"hooks"` of every settings file, and which commands an event runs.

The format is Claude Code's, so a configuration copied from it works unchanged::

    {"hooks": {"PreToolUse": [{"matcher": "Bash|Edit", "hooks": [
        {"type": "command", "command": "./check.sh", "timeout": 30}]}]}}

Hooks from every file run (user, project, local: they add up, none replaces another), each
remembering the file it came from. A matcher is matched against the event's subject (the tool
name; `startup|resume|clear|compact` for SessionStart; `manual|auto` for PreCompact): empty or
`*` matches everything, names joined by `|` match exactly, anything else is a regular
expression searched for in the name (as Claude Code does: `mcp__github__.*`, `Notebook`).
Events without a subject run every hook.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentcli.bounds import SECONDS, shown
from agentcli.errors import UsageError
from agentcli.setting_keys import setting

HOOKS_SETTING = setting("hooks")
EVENTS = (
    "PreToolUse",
    "PostToolUse",
    "PostToolUseFailure",
    "UserPromptSubmit",
    "Stop",
    "SubagentStop",
    "SessionStart",
    "SessionEnd",
    "PreCompact",
    "Notification",
)
DEFAULT_TIMEOUT_S = 60.0
_PLAIN_NAMES = re.compile(r"[A-Za-z0-9_|]*")


@dataclass(frozen=True)
class HookCommand:
    """One configured command, for one event."""

    event: str
    matcher: str
    command: str
    timeout: float
    source: Path
    """The settings file that configures it."""
    scope: str
    """`user`, `project` (checked in) or `local`."""

    def matches(self, subject: str | None) -> bool:
        return subject is None or matcher_matches(self.matcher, subject)


def matcher_matches(matcher: str, subject: str) -> bool:
    """Claude Code's matcher: empty or `*` all; `A|B` exact names; anything else a regular expression."""
    if matcher in ("", "*"):
        return True
    if _PLAIN_NAMES.fullmatch(matcher):
        return subject in matcher.split("|")
    try:
        return re.search(matcher, subject) is not None
    except re.error:  # checked when loading; never reached for a loaded hook
        return False


@dataclass(frozen=True)
class HookConfig:
    commands: tuple[HookCommand, ...] = ()

    def matching(self, event: str, subject: str | None = None) -> list[HookCommand]:
        """The commands `event` runs for `subject`, each distinct command once (in file order)."""
        seen: set[str] = set()
        chosen = []
        for hook in self.commands:
            if hook.event == event and hook.matches(subject) and hook.command not in seen:
                seen.add(hook.command)
                chosen.append(hook)
        return chosen

    def of_scope(self, scope: str) -> list[HookCommand]:
        return [hook for hook in self.commands if hook.scope == scope]

    def without_scope(self, scope: str) -> HookConfig:
        return HookConfig(tuple(hook for hook in self.commands if hook.scope != scope))


def load_hooks(files: list[tuple[str, Path, dict[str, Any]]]) -> HookConfig:
    """The hooks of each settings file's content (`Settings.raw`), in file order.

    Raises UsageError naming the file and the entry when a hook is malformed.
    """
    commands: list[HookCommand] = []
    for scope, path, data in files:
        value = data.get(HOOKS_SETTING)
        if value is None:
            continue
        if not isinstance(value, dict):
            raise _malformed(path, "hooks", 'must be an object of events, e.g. {"PreToolUse": [...]}')
        for event, groups in value.items():
            commands.extend(_event_hooks(event, groups, scope, path))
    return HookConfig(tuple(commands))


def _event_hooks(event: str, groups: object, scope: str, path: Path) -> list[HookCommand]:
    if event not in EVENTS:
        raise _malformed(path, f"hooks.{event}", f"is not a hook event; the events are {', '.join(EVENTS)}")
    if not isinstance(groups, list):
        raise _malformed(path, f"hooks.{event}", 'must be a list of {"matcher": ..., "hooks": [...]} objects')
    found: list[HookCommand] = []
    for index, group in enumerate(groups):
        where = f"hooks.{event}[{index}]"
        if not isinstance(group, dict) or not isinstance(group.get("hooks"), list):
            raise _malformed(path, where, 'must be an object with a "hooks" list')
        matcher = group.get("matcher", "")
        if not isinstance(matcher, str):
            raise _malformed(path, f"{where}.matcher", "must be a string")
        if matcher not in ("", "*") and not _PLAIN_NAMES.fullmatch(matcher):
            try:
                re.compile(matcher)
            except re.error as error:
                raise _malformed(path, f"{where}.matcher", f"is not a valid regular expression ({error})") from None
        for number, hook in enumerate(group["hooks"]):
            found.append(_command(hook, event, matcher, scope, path, f"{where}.hooks[{number}]"))
    return found


def _command(hook: object, event: str, matcher: str, scope: str, path: Path, where: str) -> HookCommand:
    if not isinstance(hook, dict):
        raise _malformed(path, where, 'must be an object like {"type": "command", "command": "..."}')
    if hook.get("type", "command") != "command":
        raise _malformed(path, f"{where}.type", f'is {hook.get("type")!r}; agentcli runs only "command" hooks')
    command = hook.get("command")
    if not isinstance(command, str) or not command.strip():
        raise _malformed(path, f"{where}.command", "must be the shell command to run")
    timeout = hook.get("timeout", DEFAULT_TIMEOUT_S)
    if not SECONDS.holds(timeout):
        raise _malformed(path, f"{where}.timeout", f"must be {SECONDS.describe()}, not {shown(timeout)}")
    return HookCommand(event, matcher, command, float(timeout), path, scope)


def _malformed(path: Path, where: str, problem: str) -> UsageError:
    return UsageError(f"Settings file {path}: {where} {problem}.")
