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

Read leniently: an event agentcli does not run, a handler type other than `command` (`http`,
`prompt`, `agent`, `mcp_tool`), a field it does not know, or an entry it cannot use (a matcher
that is not a valid regular expression, a `command` that is not text, a timeout that is not a
positive number, …) is skipped and named in one notice per file (`HookConfig.notices`); the rest
of the file applies. Skipping fails closed: a PreToolUse entry could have refused calls, so one
skipped leaves a guard (`HookConfig.guards`) that has the calls it could have matched asked about
(every call when its matcher is what could not be read).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from agentcli.bounds import SECONDS, shown
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
GUARDING_EVENTS = frozenset({"PreToolUse"})
"""Events whose hooks can refuse a tool call that nothing else would refuse: one that cannot be
used is replaced by a guard asking about the calls it could have guarded. (A PermissionRequest
hook runs only where you would be asked anyway: without it, you are.)"""
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
    unread: str = ""
    """A guard (`HookConfig.guards`): the entry that could not be used, and why; it runs nothing."""

    def matches(self, subject: str | None, also: tuple[str, ...] = ()) -> bool:
        """Whether the matcher matches `subject`, or one of the other names it goes by (`also`)."""
        return subject is None or any(matcher_matches(self.matcher, name) for name in (subject, *also))

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
    except re.error:  # checked when loading (`matcher_problem`); never reached for a loaded hook
        return False


@dataclass(frozen=True)
class HookConfig:
    commands: tuple[HookCommand, ...] = ()
    notices: tuple[str, ...] = ()
    """What was skipped while loading, one line per file (the session shows them once)."""
    guards: tuple[HookCommand, ...] = ()
    """Stand-ins for PreToolUse entries that could not be used: the calls they match are asked about."""

    def matching(self, event: str, subject: str | None = None, also: tuple[str, ...] = ()) -> list[HookCommand]:
        """The commands `event` runs for `subject` (also named `also`), each distinct command once (in file order)."""
        seen: set[tuple[str, tuple[str, ...] | None]] = set()
        chosen = []
        for hook in self.commands:
            if hook.event == event and hook.matches(subject, also) and (hook.command, hook.args) not in seen:
                seen.add((hook.command, hook.args))
                chosen.append(hook)
        return chosen

    def of_scope(self, scope: str) -> list[HookCommand]:
        return [hook for hook in self.commands if hook.scope == scope]

    def guarding(self, event: str, subject: str | None, also: tuple[str, ...] = ()) -> list[HookCommand]:
        """The guards of `event` for `subject` (also named `also`; see `guards`)."""
        return [guard for guard in self.guards if guard.event == event and guard.matches(subject, also)]

    def without_scope(self, scope: str) -> HookConfig:
        return replace(
            self,
            commands=tuple(hook for hook in self.commands if hook.scope != scope),
            guards=tuple(guard for guard in self.guards if guard.scope != scope),
        )

    def plus(self, other: HookConfig) -> HookConfig:
        """These hooks and `other`'s (a sub-agent's own, from its definition)."""
        return HookConfig(
            (*self.commands, *other.commands), (*self.notices, *other.notices), (*self.guards, *other.guards)
        )


def load_hooks(files: list[tuple[str, Path, dict[str, Any]]]) -> HookConfig:
    """The hooks of each settings file's content (`Settings.raw`), in file order; what could not be
    used is skipped, and `HookConfig.notices` says what (`hooks_of`)."""
    loaded = [
        hooks_of(data[HOOKS_SETTING], scope, path, f"{path}") for scope, path, data in files if HOOKS_SETTING in data
    ]
    return HookConfig(
        tuple(hook for config in loaded for hook in config.commands),
        tuple(notice for config in loaded for notice in config.notices),
        tuple(guard for config in loaded for guard in config.guards),
    )


def hooks_of(value: object, scope: str, path: Path, where: str, *, rename: dict[str, str] | None = None) -> HookConfig:
    """The hooks of one `hooks` object (a settings file's, or an agent definition's, whose `Stop`
    is `rename`d to `SubagentStop`); `where` names it in the one notice of what was skipped.

    Never raises: an entry that cannot be used is skipped, and named in that notice. A PreToolUse
    entry skipped leaves a guard in its place (`HookConfig.guards`): the calls it could have
    guarded are asked about."""
    reader = _Reader(scope, path)
    if not isinstance(value, dict):
        reader.skip("hooks", 'must be an object of events, e.g. {"PreToolUse": [...]}: none of these hooks run')
    else:
        for event, groups in value.items():
            if event not in EVENTS:
                why = "agentcli does not run it" if event in NOT_RUN else "not a hook event"
                reader.skipped.append(f"{event} ({why})")
                continue
            written = str(event)  # a JSON object's keys are strings
            renamed = rename.get(written, written) if rename else written
            reader.event_hooks(renamed, written, groups)
    notices = (
        (f"Skipped hooks in {where}: {'; '.join(reader.skipped)}. The other hooks run.",) if reader.skipped else ()
    )
    return HookConfig(tuple(reader.commands), notices, tuple(reader.guards))


class _Reader:
    """One `hooks` object's commands, and what was skipped (with the guards left for it)."""

    def __init__(self, scope: str, path: Path) -> None:
        self.scope = scope
        self.path = path
        self.commands: list[HookCommand] = []
        self.guards: list[HookCommand] = []
        self.skipped: list[str] = []

    def skip(
        self, where: str, why: str, *, guard: tuple[str, str] | None = None, condition: Rule | None = None
    ) -> None:
        """Skip the entry at `where`; on PreToolUse (`guard`: the event and the matcher of the calls
        it could have guarded) leave a guard asking about them instead, and say so."""
        if guard is not None and guard[0] in GUARDING_EVENTS:
            event, matcher = guard
            unread = f"{where} {why}"
            calls = "every tool call" if _plain_all(matcher) else f"the calls of {matcher!r}"
            if condition is not None:
                calls += f" named by {condition.text!r}"
            why += f" (asking you about {calls} instead, as the hook could have refused them)"
            self.guards.append(
                HookCommand(event, matcher, "", 0.0, self.path, self.scope, condition=condition, unread=unread)
            )
        self.skipped.append(f"{where} {why}")

    def event_hooks(self, event: str, written: str, groups: object) -> None:
        if not isinstance(groups, list):
            self.skip(
                f"hooks.{written}", 'must be a list of {"matcher": ..., "hooks": [...]} objects', guard=(event, "")
            )
            return
        for index, group in enumerate(groups):
            where = f"hooks.{written}[{index}]"
            matcher = group.get("matcher", "") if isinstance(group, dict) else ""
            if not isinstance(matcher, str):
                self.skip(f"{where}.matcher", "must be a string", guard=(event, ""))
                continue
            if problem := matcher_problem(matcher):
                self.skip(f"{where}.matcher {matcher!r}", problem, guard=(event, ""))
                continue
            if not isinstance(group, dict) or not isinstance(group.get("hooks"), list):
                self.skip(where, 'must be an object with a "hooks" list', guard=(event, matcher))
                continue
            if unknown := sorted(set(group) - GROUP_FIELDS):
                self.skipped.append(
                    f"{where}: the field{'s' if len(unknown) > 1 else ''} {', '.join(unknown)} (not known)"
                )
            for number, hook in enumerate(group["hooks"]):
                command = self.command(hook, event, matcher, f"{where}.hooks[{number}]")
                if command is not None:
                    self.commands.append(command)

    def command(self, hook: object, event: str, matcher: str, where: str) -> HookCommand | None:
        guard = (event, matcher)
        if not isinstance(hook, dict):
            self.skip(where, 'must be an object like {"type": "command", "command": "..."}', guard=guard)
            return None
        condition = _condition(hook.get("if"), event, self.path, where, self.skipped) if event in TOOL_EVENTS else None
        kind = hook.get("type", "command")
        if kind != "command":
            if not isinstance(kind, str):
                why = f'(type {shown(kind)}: must be "command", or one of {_listed(OTHER_TYPES)})'
            elif kind in OTHER_TYPES:
                why = f'(type "{kind}": agentcli runs only command hooks)'
            else:
                why = f'(type "{kind}": not a hook type)'
            self.skip(where, why, guard=guard, condition=condition)
            return None
        if unknown := sorted(set(hook) - HANDLER_FIELDS):
            self.skipped.append(f"{where}: the field{'s' if len(unknown) > 1 else ''} {', '.join(unknown)} (not known)")
        if problem := _handler_problem(hook, event):
            field, why = problem
            self.skip(f"{where}{field}", why, guard=guard, condition=condition)
            return None
        if hook.get("shell", "bash") == "powershell" and hook.get("args") is None:
            self.skip(
                where, "(a PowerShell command: agentcli runs commands with bash)", guard=guard, condition=condition
            )
            return None
        if "if" in hook and event not in TOOL_EVENTS:
            self.skipped.append(
                f"{where} (an `if` on {event}, which has no tool call: it never runs, as in Claude Code)"
            )
            return None
        args = hook.get("args")
        return HookCommand(
            event,
            matcher,
            hook["command"],
            float(hook.get("timeout", SHORT_TIMEOUTS.get(event, DEFAULT_TIMEOUT_S))),
            self.path,
            self.scope,
            args=None if args is None else tuple(args),
            condition=condition,
            background=hook.get("async", False) or hook.get("asyncRewake", False),
            rewake=hook.get("asyncRewake", False),
            shell=hook.get("shell", "bash"),
        )


def matcher_problem(matcher: str) -> str | None:
    """Why `matcher` cannot be used (a regular expression that does not compile), or None."""
    if _PLAIN_NAMES.fullmatch(matcher) or matcher.strip() == "*":
        return None
    try:
        re.compile(matcher)
    except re.error as error:
        return f"is not a valid regular expression ({error})"
    return None


def _handler_problem(hook: dict[str, Any], event: str) -> tuple[str, str] | None:
    """(the field, what is wrong with it) for the first field agentcli uses with a value it cannot use."""
    command = hook.get("command")
    if not isinstance(command, str) or not command.strip():
        return ".command", "must be the shell command to run"
    timeout = hook.get("timeout", SHORT_TIMEOUTS.get(event, DEFAULT_TIMEOUT_S))
    if not SECONDS.holds(timeout):
        return ".timeout", f"must be {SECONDS.describe()}, not {shown(timeout)}"
    args = hook.get("args")
    if args is not None and (not isinstance(args, list) or not all(isinstance(arg, str) for arg in args)):
        return ".args", "must be a list of strings"
    if hook.get("shell", "bash") not in ("bash", "powershell"):
        return ".shell", 'must be "bash" or "powershell"'
    for name in ("async", "asyncRewake"):
        if not isinstance(hook.get(name, False), bool):
            return f".{name}", "must be true or false"
    return None


def _plain_all(matcher: str) -> bool:
    return matcher.strip() in ("", "*")


def _condition(value: object, event: str, path: Path, where: str, skipped: list[str]) -> Rule | None:
    """The `if` rule. One that cannot be read is dropped with a notice (the hook then runs for
    every call its matcher names: a policy hook errs on the side of running)."""
    if value is None:
        return None
    if not isinstance(value, str):
        skipped.append(
            f'{where}.if (must be one permission rule, e.g. "Bash(git *)": '
            f"the hook runs for every {event} its matcher names)"
        )
        return None
    try:
        return parse_rule(value, "ask", RuleSource("hook", str(path)))
    except RuleError as error:
        skipped.append(f'{where}.if "{value}" ({error}: the hook runs for every {event} its matcher names)')
        return None


def _listed(names: frozenset[str]) -> str:
    return ", ".join(f'"{name}"' for name in sorted(names))
