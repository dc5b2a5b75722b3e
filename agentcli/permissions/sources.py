"""Where rules and the starting mode come from: the settings files plus the flags.

Each settings file may hold::

    {"permissions": {"allow": [...], "ask": [...], "deny": [...], "defaultMode": "...",
                     "additionalDirectories": [...], "disableBypassPermissionsMode": "disable"}}

Rules from every source are merged (a deny anywhere beats an allow anywhere); for
`defaultMode` the most specific file wins, and `--permission-mode` beats them all.

Read as Claude Code reads them, and failing closed where that matters: a key of `permissions`
agentcli does not know is skipped with a notice; an allow rule that cannot be parsed or is not
text, or an `allow` that is not a list, is skipped with a notice (it allows nothing); a deny or
ask rule that cannot be parsed applies to every call of the tool it names (`rules.fallback_rule`:
`Bash(rm -rf` denies every Bash call), with a notice saying so; one that names no tool at all, a
deny or ask value of the wrong kind, and anything malformed in `--allowed-tools`/
`--disallowed-tools` is a UsageError naming where it is (nothing runs rather than a deny lost).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentcli.errors import UsageError
from agentcli.permissions.modes import CLAUDE_CODE_ONLY, Mode, check_mode
from agentcli.permissions.rules import BEHAVIORS, Behavior, Rule, RuleError, RuleSource, fallback_rule, parse_rule
from agentcli.setting_keys import keys_inside, setting
from agentcli.settings import OWN_SCOPES, Settings

PERMISSIONS_SETTING = setting("permissions")
PERMISSION_KEYS = keys_inside(PERMISSIONS_SETTING)
FLAG_FOR: dict[Behavior, str] = {"allow": "--allowed-tools", "deny": "--disallowed-tools"}
DIRECTORIES_KEY = "additionalDirectories"
DISABLE_BYPASS_KEY = "disableBypassPermissionsMode"
DISABLE = "disable"
"""The one value of `disableBypassPermissionsMode`, as Claude Code has it."""


@dataclass
class RuleSet:
    """Every rule in force, in load order (user, project, local, flags, then this session)."""

    rules: list[Rule] = field(default_factory=list)

    def of(self, behavior: Behavior) -> list[Rule]:
        return [r for r in self.rules if r.behavior == behavior]

    def add(self, rule: Rule) -> bool:
        """Add `rule` unless the same rule is already in force; True if it was added."""
        if any(r.text == rule.text and r.behavior == rule.behavior for r in self.rules):
            return False
        self.rules.append(rule)
        return True

    def remove(self, rule: Rule) -> None:
        self.rules = [r for r in self.rules if r is not rule]


def load_rules(settings: Settings, allowed: Sequence[str] = (), disallowed: Sequence[str] = ()) -> RuleSet:
    """The merged rules of the settings files and `--allowed-tools`/`--disallowed-tools`."""
    rule_set = RuleSet()
    for scope, path, data in settings.raw:
        block = _permissions_block(path, data, settings.notices)
        source = RuleSource(scope, str(path))
        for behavior in BEHAVIORS:
            for rule in _file_rules(path, block, behavior, source, settings.notices):
                rule_set.add(rule)
    for behavior, values in (("allow", allowed), ("deny", disallowed)):
        flag = FLAG_FOR[behavior]
        for text in values:
            rule_set.add(_parse(text, behavior, RuleSource("flag", flag), where=flag))
    return rule_set


def settings_mode(settings: Settings) -> Mode | None:
    """The `defaultMode` of the most specific settings file that sets one.

    `bypassPermissions` counts only from the user's settings files (as in Claude Code), and not
    once `disableBypassPermissionsMode` is set: a project's files cannot switch every question
    off; Claude Code's `auto` has no counterpart. A notice says what was ignored.
    """
    mode: Mode | None = None
    disabled = bypass_disabled_by(settings)
    for scope, path, data in settings.raw:
        value = _permissions_block(path, data).get("defaultMode")
        if value is not None:
            if not isinstance(value, str):
                raise UsageError(f"Settings file {path}: permissions.defaultMode must be a string.")
            if value in CLAUDE_CODE_ONLY:
                settings.notices.append(f"Ignored defaultMode {value} in {path}: agentcli has no {value} mode.")
                continue
            checked = check_mode(value, f"{path} (permissions.defaultMode)")
            if checked == "bypassPermissions" and (scope != "user" or disabled):
                why = (
                    f"{DISABLE_BYPASS_KEY} in {disabled} turns it off"
                    if disabled
                    else "only your user settings or --permission-mode bypassPermissions turn every question off"
                )
                settings.notices.append(f"Ignored defaultMode bypassPermissions in {path}: {why}.")
                continue
            mode = checked
    return mode


def resolve_mode(flag: str | None, settings: Settings) -> Mode:
    if flag:
        mode = check_mode(flag)
        if mode == "bypassPermissions" and (disabled := bypass_disabled_by(settings)):
            raise UsageError(
                f"--permission-mode bypassPermissions is turned off by {DISABLE_BYPASS_KEY} in {disabled}; "
                "choose another mode."
            )
        return mode
    return settings_mode(settings) or "default"


def bypass_disabled_by(settings: Settings) -> Path | None:
    """The settings file that turns bypassPermissions off (`"disableBypassPermissionsMode": "disable"`),
    if one does. Any file may: it only takes power away."""
    for _, path, data in settings.raw:
        value = _permissions_block(path, data).get(DISABLE_BYPASS_KEY)
        if value is not None and value != DISABLE:
            raise UsageError(f'Settings file {path}: permissions.{DISABLE_BYPASS_KEY} must be "{DISABLE}".')
        if value == DISABLE:
            return path
    return None


def additional_directories(settings: Settings, cwd: Path) -> list[Path]:
    """The more working folders of `permissions.additionalDirectories` in the user's own files
    (relative ones to the project, `~` to the home folder), each once. In a checked-in file they
    are ignored with a notice: a repository cannot widen what is read without asking."""
    found: list[Path] = []
    for scope, path, data in settings.raw:
        value = _permissions_block(path, data).get(DIRECTORIES_KEY)
        if value is None:
            continue
        if not isinstance(value, list) or not all(isinstance(item, str) and item for item in value):
            raise UsageError(f"Settings file {path}: permissions.{DIRECTORIES_KEY} must be a list of folder paths.")
        if scope not in OWN_SCOPES:
            settings.notices.append(
                f"Ignored permissions.{DIRECTORIES_KEY} in {path}: more working folders only by your own settings "
                "(user or local), never by the repository's."
            )
            continue
        for item in value:
            folder = Path(item).expanduser()
            folder = folder if folder.is_absolute() else cwd / folder
            if folder not in found:
                found.append(folder)
    return found


def _permissions_block(path: Path, data: dict[str, Any], notices: list[str] | None = None) -> dict[str, Any]:
    """The file's `permissions` object. With `notices`, keys agentcli does not know are named there."""
    block = data.get(PERMISSIONS_SETTING, {})
    if not isinstance(block, dict):
        raise UsageError(f'Settings file {path}: "permissions" must be an object, not {type(block).__name__}.')
    unknown = [key for key in block if key not in PERMISSION_KEYS]
    if unknown and notices is not None:
        notices.append(f"Ignored in {path}: permissions.{', permissions.'.join(unknown)} (not used by agentcli).")
    return block


def _file_rules(
    path: Path, block: dict[str, Any], behavior: Behavior, source: RuleSource, notices: list[str]
) -> Iterable[Rule]:
    values = block.get(behavior, [])
    if not isinstance(values, list):
        if behavior == "allow":  # skipping it allows less: no harm
            notices.append(f"Skipped permissions.allow in {path}: it must be a list of rules; it allows nothing.")
            return
        raise UsageError(f"Settings file {path}: permissions.{behavior} must be a list of rules.")
    for index, text in enumerate(values):
        where = f"{path} (permissions.{behavior}[{index}])"
        if not isinstance(text, str):
            if behavior == "allow":
                notices.append(f"Skipped the allow rule {text!r} in {where}: a rule is text; it allows nothing.")
                continue
            yield _parse(text, behavior, source, where)  # a deny or ask rule of the wrong kind: an error
            continue
        try:
            yield parse_rule(text, behavior, source)
        except RuleError as error:
            rule = None if behavior == "allow" else fallback_rule(text, behavior, source)
            if rule is None and behavior != "allow":
                raise UsageError(f'Invalid permission rule "{text}" in {where}: {error}.') from None
            if rule is None:
                notices.append(f'Skipped the allow rule "{text}" in {where}: {error}; it allows nothing.')
                continue
            verb = "denies" if behavior == "deny" else "asks about"
            what = (
                f'every {rule.tool} command starting "{" ".join(rule.bash.words)}"'
                if rule.bash
                else f"every {rule.tool} call"
            )
            notices.append(
                f'The {behavior} rule "{text}" in {where} cannot be read exactly ({error}): until it is fixed it '
                f"{verb} {what}."
            )
            yield rule


def _parse(text: Any, behavior: Behavior, source: RuleSource, where: str) -> Rule:
    try:
        return parse_rule(text, behavior, source)
    except RuleError as error:
        shown = text if isinstance(text, str) else repr(text)
        raise UsageError(f'Invalid permission rule "{shown}" in {where}: {error}.') from None
