"""Where rules and the starting mode come from: three settings files plus the flags.

Each settings file may hold::

    {"permissions": {"allow": [...], "ask": [...], "deny": [...], "defaultMode": "..."}}

Rules from every source are merged (a deny anywhere beats an allow anywhere); for
`defaultMode` the most specific file wins, and `--permission-mode` beats them all.
Anything malformed is a UsageError naming the file and the rule.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentcli.errors import UsageError
from agentcli.permissions.modes import Mode, check_mode
from agentcli.permissions.rules import BEHAVIORS, Behavior, Rule, RuleError, RuleSource, parse_rule
from agentcli.setting_keys import keys_inside, setting
from agentcli.settings import Settings

PERMISSIONS_SETTING = setting("permissions")
PERMISSION_KEYS = keys_inside(PERMISSIONS_SETTING)
FLAG_FOR: dict[Behavior, str] = {"allow": "--allowed-tools", "deny": "--disallowed-tools"}


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
        block = _permissions_block(path, data)
        source = RuleSource(scope, str(path))
        for behavior in BEHAVIORS:
            for rule in _file_rules(path, block, behavior, source):
                rule_set.add(rule)
    for behavior, values in (("allow", allowed), ("deny", disallowed)):
        flag = FLAG_FOR[behavior]
        for text in values:
            rule_set.add(_parse(text, behavior, RuleSource("flag", flag), where=flag))
    return rule_set


def settings_mode(settings: Settings) -> Mode | None:
    """The `defaultMode` of the most specific settings file that sets one.

    `bypassPermissions` counts only from the user's settings file (as in Claude Code): a
    project's files cannot switch every question off; a notice says it was ignored.
    """
    mode: Mode | None = None
    for scope, path, data in settings.raw:
        value = _permissions_block(path, data).get("defaultMode")
        if value is not None:
            if not isinstance(value, str):
                raise UsageError(f"Settings file {path}: permissions.defaultMode must be a string.")
            checked = check_mode(value, f"{path} (permissions.defaultMode)")
            if checked == "bypassPermissions" and scope != "user":
                settings.notices.append(
                    f"Ignored defaultMode bypassPermissions in {path}: only your user settings or "
                    "--permission-mode bypassPermissions turn every question off."
                )
                continue
            mode = checked
    return mode


def resolve_mode(flag: str | None, settings: Settings) -> Mode:
    if flag:
        return check_mode(flag)
    return settings_mode(settings) or "default"


def _permissions_block(path: Path, data: dict[str, Any]) -> dict[str, Any]:
    block = data.get(PERMISSIONS_SETTING, {})
    if not isinstance(block, dict):
        raise UsageError(f'Settings file {path}: "permissions" must be an object, not {type(block).__name__}.')
    unknown = [key for key in block if key not in PERMISSION_KEYS]
    if unknown:
        raise UsageError(
            f'Settings file {path}: unknown key {unknown[0]!r} in "permissions" '
            f"(expected {', '.join(PERMISSION_KEYS)})."
        )
    return block


def _file_rules(path: Path, block: dict[str, Any], behavior: Behavior, source: RuleSource) -> Iterable[Rule]:
    values = block.get(behavior, [])
    if not isinstance(values, list):
        raise UsageError(f"Settings file {path}: permissions.{behavior} must be a list of rules.")
    for index, text in enumerate(values):
        yield _parse(text, behavior, source, where=f"{path} (permissions.{behavior}[{index}])")


def _parse(text: Any, behavior: Behavior, source: RuleSource, where: str) -> Rule:
    try:
        return parse_rule(text, behavior, source)
    except RuleError as error:
        shown = text if isinstance(text, str) else repr(text)
        raise UsageError(f'Invalid permission rule "{shown}" in {where}: {error}.') from None
