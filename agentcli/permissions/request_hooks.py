"""PermissionRequest hooks: answering a permission question in the user's place.

When the gate would ask the user about a call (or, in `agentcli run`, deny it because nobody
can be asked), the PermissionRequest hooks run first with the call (`tool_name`,
`tool_input`, `permission_suggestions`: the "don't ask again" rules the question offers). As
Claude Code documents them:

- `behavior: "deny"` denies the call, its `message` told to the model;
- `behavior: "allow"` lets it run without asking, except where a deny or ask rule or a
  protected path made the question (those are still asked, as a PreToolUse `allow` is);
  its `updatedPermissions` add rules (`addRules`, in memory or the local settings) or switch
  the mode (`setMode`, never to bypassPermissions);
- no decision: the question goes to the user as before (in `run`, the call is denied).

Not applied, each said in a notice: an `allow` that rewrites the call's input
(`updatedInput`: the user is asked about the call as it was), `interrupt`, and the other
kinds of update (`replaceRules`, `removeRules`, `addDirectories`, `removeDirectories`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from agentcli.contracts import JSON
from agentcli.hooks.decisions import HookOutcome
from agentcli.permissions.modes import MODES, Mode
from agentcli.permissions.prompt import PermissionRequest
from agentcli.permissions.rules import BEHAVIORS, Behavior, Rule, split_rule_list
from agentcli.permissions.suggest import Suggestion

NamesCall = Callable[[Rule], bool]


class PermissionHooks(Protocol):
    def __call__(self, request: PermissionRequest, names_call: NamesCall, /) -> HookOutcome:
        """Run the PermissionRequest hooks about `request` (`names_call` judges their `if`)."""
        ...


def request_fields(request: PermissionRequest) -> JSON:
    """The event's own input fields, as Claude Code sends them."""
    fields: JSON = {"tool_name": request.tool, "tool_input": request.tool_input}
    if request.suggestion is not None:
        fields["permission_suggestions"] = suggestions(request.suggestion)
    return fields


def suggestions(suggestion: Suggestion) -> list[JSON]:
    """The "don't ask again" rules as Claude Code's permission update entries."""
    destination = "localSettings" if suggestion.scope == "local" else "session"
    rules = [_rule_value(text) for text in suggestion.rules]
    return [{"type": "addRules", "rules": rules, "behavior": "allow", "destination": destination}]


@dataclass(frozen=True)
class Update:
    """One `updatedPermissions` entry, as agentcli applies it."""

    rules: tuple[tuple[Behavior, str], ...] = ()
    """(behaviour, rule text) to add."""
    lasting: bool = False
    """Saved to the local settings (`destination: localSettings`), not only kept for the session."""
    mode: Mode | None = None
    unapplied: str = ""
    """Why it is not applied (for a notice)."""


def read_update(entry: JSON) -> Update:
    kind = entry.get("type")
    destination = entry.get("destination", "session")
    if kind == "addRules":
        behavior = next((b for b in BEHAVIORS if b == entry.get("behavior")), None)
        values = entry.get("rules")
        if behavior is None or not isinstance(values, list):
            return Update(unapplied='an "addRules" update without a behavior and a list of rules')
        texts = [text for value in values if (text := _rule_text(value))]
        return Update(tuple((behavior, text) for text in texts), lasting=destination == "localSettings")
    if kind == "setMode":
        mode = "default" if entry.get("mode") == "manual" else entry.get("mode")
        if mode == "bypassPermissions" or mode not in MODES:
            return Update(unapplied=f"switching to the mode {entry.get('mode')!r}")
        return Update(mode=next(m for m in MODES if m == mode))
    return Update(unapplied=f'"{kind}" updates')


def _rule_value(text: str) -> JSON:
    tool, _, rest = text.partition("(")
    return {"toolName": tool, "ruleContent": rest[:-1]} if rest.endswith(")") else {"toolName": text}


def _rule_text(value: object) -> str:
    if isinstance(value, str):
        return " ".join(split_rule_list(value)[:1])
    if not isinstance(value, dict) or not isinstance(value.get("toolName"), str):
        return ""
    content = value.get("ruleContent")
    return f"{value['toolName']}({content})" if isinstance(content, str) and content else value["toolName"]
