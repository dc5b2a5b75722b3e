"""Hook configuration: the `"hooks"` of every settings file, and which commands an event runs.

The format is Claude Code's, so a configuration copied from it works unchanged::

    {"hooks": {"PreToolUse": [{"matcher": "Bash|Edit", "hooks": [
        {"type": "command", "command": "./check.sh", "timeout": 30, "if": "Bash(git *)"}]}]}}

Hooks from every file run (user, project, local: they add up, none replaces another), each
remembering the file it came from. A matcher is matched against the event's subject (the tool
name; `startup|resume|clear|compact` for SessionStart; the `load_reason` for InstructionsLoaded;
`manual|auto` for PreCompact; the agent type for SubagentStart and SubagentStop; the command's
name for UserPromptExpansion; …): empty
or `*` matches everything; letters, digits, `_`, `-` and spaces are names, separated by `|` or
`,`, matched exactly; anything else is a regular expression searched for in the name (as Claude
Code does: `mcp__github__.*`, `Notebook`). Claude Code's `Agent` tool is agentcli's `Task`: a
matcher or an `if` naming either names both. Events without a subject run every hook.

A handler's `if` is one permission rule (`Bash(git *)`, `Edit(*.ts)`): on a tool event the
hook runs only for calls the rule names, as a deny rule would name them; on any other event a
hook with `if` never runs. `async: true` runs it in the background (`agentcli.hooks.background`);
`args` runs `command` as a program with those arguments, no shell.

Read leniently, as Claude Code reads it: an event agentcli does not run, a handler type other
than `command` (`http`, `prompt`, `agent`, `mcp_tool`), or a field it does not know is skipped
and named in one notice per file (`HookConfig.notices`); the rest of the file applies. A field
agentcli knows with a value of the wrong kind (a `command` that is not text, a timeout that is
not a positive number, a matcher that is not a valid regular expression) is a UsageError naming
the file and the entry.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from agentcli.bounds import SECONDS, shown
from agentcli.errors import UsageError
from agentcli.permissions.rules import Rule, RuleError, RuleSource, parse_rule
from agentcli.setting_keys import setting

HOOKS_SETTING = setting("hooks")
EVENTS = (
    "SessionStart",
    "InstructionsLoaded",
    "UserPromptSubmit",
    "UserPromptExpansion",
    "PreToolUse",
    "PermissionRequest",
    "PostToolUse",
    "PostToolUseFailure",
    "Notification",
    "SubagentStart",
    "SubagentStop",
    "Stop",
    "StopFailure",
    "PreCompact",
    "PostCompact",
    "SessionEnd",
)
"""The events agentcli runs, in the order of a session's life."""
NOT_RUN = (
    "Setup",
    "MessageDisplay",
    "PermissionDenied",
    "PostToolBatch",
    "TaskCreated",
    "TaskCompleted",
    "TeammateIdle",
    "ConfigChange",
    "CwdChanged",
    "DirectoryAdded",
    "FileChanged",
    "WorktreeCreate",
    "WorktreeRemove",
    "Elicitation",
    "ElicitationResult",
)
"""Claude Code's events with no counterpart in agentcli: their hooks are skipped with a notice."""
TOOL_EVENTS = frozenset({"PreToolUse", "PostToolUse", "PostToolUseFailure", "PermissionRequest", "PermissionDenied"})
"""The events whose hooks may have an `if`."""
OTHER_TYPES = frozenset({"http", "prompt", "agent", "mcp_tool"})
"""Claude Code's handler types agentcli does not run."""
HANDLER_FIELDS = frozenset(
    {"type", "command", "args", "timeout", "if", "async", "asyncRewake", "shell", "statusMessage", "once"}
)
"""The fields of a command handler Claude Code documents (`statusMessage`, and `once`, which Claude
Code honours only in a skill's frontmatter, are accepted and do nothing)."""
GROUP_FIELDS = frozenset({"matcher", "hooks"})
DEFAULT_TIMEOUT_S = 600.0
SHORT_TIMEOUTS = {"UserPromptSubmit": 30.0}
"""Events whose hooks have a shorter default timeout (they hold up what the user typed)."""
ALIASES = {"Task": ("Task", "Agent")}
"""A subject and the names Claude Code gives it: its `Task` tool is `Agent` since 2.1.63."""
_PLAIN_NAMES = re.compile(r"[A-Za-z0-9_\-|, ]*")
_SEPARATORS = re.compile(r"[|,]")


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
    args: tuple[str, ...] | None = None
    """With `args` the command is a program run with them, no shell (`${CLAUDE_PROJECT_DIR}` filled in)."""
    condition: Rule | None = None
    """Its `if`: the tool calls it runs for (tool events only)."""
    background: bool = False
    """`async` (or `asyncRewake`): started without waiting; what it says reaches the model later."""
    rewake: bool = False
    """`asyncRewake`: its exit 2 tells the model its stderr (later, as `background` hooks do)."""
    shell: str = "bash"
    """The shell of a command without `args`: bash, as in Claude Code (`/bin/sh` where there is none)."""
    plugin_root: Path | None = None
    """A plugin's hook: its folder, `CLAUDE_PLUGIN_ROOT` in the hook's environment (and in `args`)."""
    origin: str = ""
    """Where it came from when not a settings file of the user's or the project's (`plugin NAME@MKT`)."""

    def matches(self, subject: str | None) -> bool:
        return subject is None or matcher_matches(self.matcher, subject)

    @property
    def described(self) -> list[Any]:
        """What it runs and when, for the digest the user trusts (`hooks.trust`): the fields
        that change what runs, the later ones only when set, so an old digest stays the same."""
        extra: list[Any] = []
        if self.args is not None or self.condition is not None or self.background:
            extra = [self.args, self.condition.text if self.condition else None, self.background]
        return [self.event, self.matcher, self.command, self.timeout, *extra]


def matcher_matches(matcher: str, subject: str) -> bool:
    """Claude Code's matcher: empty or `*` all; `A|B` or `A, B` exact names; anything else a regular expression."""
    if matcher.strip() in ("", "*"):
        return True
    names = ALIASES.get(subject, (subject,))
    if _PLAIN_NAMES.fullmatch(matcher):
        listed = {part.strip() for part in _SEPARATORS.split(matcher)}
        return any(name in listed for name in names)
    try:
        return any(re.search(matcher, name) is not None for name in names)
    except re.error:  # checked when loading; never reached for a loaded hook
        return False


@dataclass(frozen=True)
class HookConfig:
    commands: tuple[HookCommand, ...] = ()
    notices: tuple[str, ...] = ()
    """What was skipped while loading, one line per file (the session shows them once)."""

    def matching(self, event: str, subject: str | None = None) -> list[HookCommand]:
        """The commands `event` runs for `subject`, each distinct command once (in file order)."""
        seen: set[tuple[str, tuple[str, ...] | None]] = set()
        chosen = []
        for hook in self.commands:
            if hook.event == event and hook.matches(subject) and (hook.command, hook.args) not in seen:
                seen.add((hook.command, hook.args))
                chosen.append(hook)
        return chosen

    def of_scope(self, scope: str) -> list[HookCommand]:
        return [hook for hook in self.commands if hook.scope == scope]

    def without_scope(self, scope: str) -> HookConfig:
        return replace(self, commands=tuple(hook for hook in self.commands if hook.scope != scope))

    def plus(self, other: HookConfig) -> HookConfig:
        """These hooks and `other`'s (a sub-agent's own, from its definition)."""
        return HookConfig((*self.commands, *other.commands), (*self.notices, *other.notices))


def load_hooks(files: list[tuple[str, Path, dict[str, Any]]]) -> HookConfig:
    """The hooks of each settings file's content (`Settings.raw`), in file order.

    Raises UsageError naming the file and the entry when a field agentcli uses is malformed;
    what it cannot run is skipped, and `HookConfig.notices` says what."""
    commands: list[HookCommand] = []
    notices: list[str] = []
    for scope, path, data in files:
        value = data.get(HOOKS_SETTING)
        if value is None:
            continue
        loaded = hooks_of(value, scope, path, f"{path}")
        commands.extend(loaded.commands)
        notices.extend(loaded.notices)
    return HookConfig(tuple(commands), tuple(notices))


def hooks_of(value: object, scope: str, path: Path, where: str, *, rename: dict[str, str] | None = None) -> HookConfig:
    """The hooks of one `hooks` object (a settings file's, or an agent definition's, whose `Stop`
    is `rename`d to `SubagentStop`); `where` names it in the one notice of what was skipped."""
    if not isinstance(value, dict):
        raise _malformed(path, "hooks", 'must be an object of events, e.g. {"PreToolUse": [...]}')
    skipped: list[str] = []
    commands: list[HookCommand] = []
    for event, groups in value.items():
        if event not in EVENTS:
            why = "agentcli does not run it" if event in NOT_RUN else "not a hook event"
            skipped.append(f"{event} ({why})")
            continue
        written = str(event)  # a JSON object's keys are strings
        renamed = rename.get(written, written) if rename else written
        commands.extend(_event_hooks(renamed, written, groups, scope, path, skipped))
    notices = (f"Skipped hooks in {where}: {'; '.join(skipped)}. The other hooks run.",) if skipped else ()
    return HookConfig(tuple(commands), notices)


def _event_hooks(
    event: str, written: str, groups: object, scope: str, path: Path, skipped: list[str]
) -> list[HookCommand]:
    if not isinstance(groups, list):
        raise _malformed(path, f"hooks.{written}", 'must be a list of {"matcher": ..., "hooks": [...]} objects')
    found: list[HookCommand] = []
    for index, group in enumerate(groups):
        where = f"hooks.{written}[{index}]"
        if not isinstance(group, dict) or not isinstance(group.get("hooks"), list):
            raise _malformed(path, where, 'must be an object with a "hooks" list')
        if unknown := sorted(set(group) - GROUP_FIELDS):
            skipped.append(f"{where}: the field{'s' if len(unknown) > 1 else ''} {', '.join(unknown)} (not known)")
        matcher = group.get("matcher", "")
        if not isinstance(matcher, str):
            raise _malformed(path, f"{where}.matcher", "must be a string")
        if not _PLAIN_NAMES.fullmatch(matcher) and matcher.strip() != "*":
            try:
                re.compile(matcher)
            except re.error as error:
                raise _malformed(path, f"{where}.matcher", f"is not a valid regular expression ({error})") from None
        for number, hook in enumerate(group["hooks"]):
            command = _command(hook, event, matcher, scope, path, f"{where}.hooks[{number}]", skipped)
            if command is not None:
                found.append(command)
    return found


def _command(
    hook: object, event: str, matcher: str, scope: str, path: Path, where: str, skipped: list[str]
) -> HookCommand | None:
    if not isinstance(hook, dict):
        raise _malformed(path, where, 'must be an object like {"type": "command", "command": "..."}')
    kind = hook.get("type", "command")
    if kind != "command":
        if not isinstance(kind, str):
            raise _malformed(path, f"{where}.type", f'must be "command" (or one of {_listed(OTHER_TYPES)})')
        why = "agentcli runs only command hooks" if kind in OTHER_TYPES else "not a hook type"
        skipped.append(f'{where} (type "{kind}": {why})')
        return None
    if unknown := sorted(set(hook) - HANDLER_FIELDS):
        skipped.append(f"{where}: the field{'s' if len(unknown) > 1 else ''} {', '.join(unknown)} (not known)")
    command = hook.get("command")
    if not isinstance(command, str) or not command.strip():
        raise _malformed(path, f"{where}.command", "must be the shell command to run")
    timeout = hook.get("timeout", SHORT_TIMEOUTS.get(event, DEFAULT_TIMEOUT_S))
    if not SECONDS.holds(timeout):
        raise _malformed(path, f"{where}.timeout", f"must be {SECONDS.describe()}, not {shown(timeout)}")
    args = hook.get("args")
    if args is not None and (not isinstance(args, list) or not all(isinstance(arg, str) for arg in args)):
        raise _malformed(path, f"{where}.args", "must be a list of strings")
    shell = hook.get("shell", "bash")
    if shell not in ("bash", "powershell"):
        raise _malformed(path, f"{where}.shell", 'must be "bash" or "powershell"')
    if shell == "powershell" and args is None:
        skipped.append(f"{where} (a PowerShell command: agentcli runs commands with bash)")
        return None
    if "if" in hook and event not in TOOL_EVENTS:
        skipped.append(f"{where} (an `if` on {event}, which has no tool call: it never runs, as in Claude Code)")
        return None
    flags = {name: hook.get(name, False) for name in ("async", "asyncRewake")}
    for name, flag in flags.items():
        if not isinstance(flag, bool):
            raise _malformed(path, f"{where}.{name}", "must be true or false")
    return HookCommand(
        event,
        matcher,
        command,
        float(timeout),
        path,
        scope,
        args=None if args is None else tuple(args),
        condition=_condition(hook.get("if"), event, path, where, skipped),
        background=flags["async"] or flags["asyncRewake"],
        rewake=flags["asyncRewake"],
        shell=shell,
    )


def _condition(value: object, event: str, path: Path, where: str, skipped: list[str]) -> Rule | None:
    """The `if` rule. One that cannot be read is dropped with a notice (the hook then runs for
    every call its matcher names: a policy hook errs on the side of running)."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise _malformed(path, f"{where}.if", 'must be one permission rule, e.g. "Bash(git *)"')
    try:
        return parse_rule(value, "ask", RuleSource("hook", str(path)))
    except RuleError as error:
        skipped.append(f'{where}.if "{value}" ({error}: the hook runs for every {event} its matcher names)')
        return None


def _listed(names: frozenset[str]) -> str:
    return ", ".join(f'"{name}"' for name in sorted(names))


def _malformed(path: Path, where: str, problem: str) -> UsageError:
    return UsageError(f"Settings file {path}: {where} {problem}.")
