"""What the runs of one event's hooks decide, read as Claude Code reads them.

- Exit 0: go on. Stdout that is a JSON object is read for the fields below; any other stdout
  is context for the model on `UserPromptSubmit` and `SessionStart` (and ignored elsewhere).
- Exit 2: block. Stderr is the reason (what blocking means is the event's: see `agentcli.hooks`).
  JSON on stdout is not read.
- Anything else (another status, a timeout, a command that cannot start): a one-line warning
  for the user, and go on.

JSON fields: `continue: false` (+ `stopReason`) stops the agent; `decision: "block"` (+ `reason`)
blocks (`"approve"` on PreToolUse allows, as Claude Code's older form); `systemMessage` is shown
to the user; `hookSpecificOutput` carries `permissionDecision` (`allow|deny|ask`),
`permissionDecisionReason` and `updatedInput` for PreToolUse, `decision` (`behavior`,
`message`, `interrupt`, `updatedPermissions`, `updatedInput`) for PermissionRequest, and
`additionalContext`. Several hooks combine: any block blocks, deny beats ask beats allow,
contexts add up.

Where Claude Code's reference says an event cannot be blocked, exit 2 does not block it: on
SessionStart, SubagentStart, SessionEnd, PostCompact and StopFailure its stderr is shown to the
user; on Notification, PermissionRequest and InstructionsLoaded it is ignored (a PermissionRequest hook decides only
through its `decision` object).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from agentcli.contracts import JSON
from agentcli.hooks.runner import HookRun

Permission = Literal["allow", "deny", "ask"]
PLAIN_CONTEXT_EVENTS = ("UserPromptSubmit", "SessionStart", "PreCompact")
SHOWN_ON_EXIT_2 = frozenset({"SessionStart", "SubagentStart", "SessionEnd", "PostCompact", "StopFailure"})
"""Events that cannot be blocked whose exit-2 stderr is shown to the user."""
IGNORED_ON_EXIT_2 = frozenset({"Notification", "PermissionRequest", "InstructionsLoaded"})
"""Events that cannot be blocked whose exit code 2 changes nothing."""
Behavior = Literal["allow", "deny"]
_STRENGTH: dict[Permission, int] = {"allow": 0, "ask": 1, "deny": 2}


@dataclass(frozen=True)
class HookOutcome:
    """What the hooks of one event said, together."""

    blocked: bool = False
    reason: str = ""
    """Why it is blocked: the hooks' stderr (exit 2) or their `reason`s."""
    permission: Permission | None = None
    permission_reason: str = ""
    updated_input: JSON | None = None
    context: tuple[str, ...] = ()
    """For the model: `additionalContext`, and plain stdout where the event takes it."""
    stop: str | None = None
    """`continue: false`: why the agent stops (`stopReason`, or a default naming the hook)."""
    warnings: tuple[str, ...] = ()
    """For the user, one line each: hooks that failed, and `systemMessage`s."""
    behavior: Behavior | None = None
    """A PermissionRequest hook's answer in the user's place (deny beats allow)."""
    message: str = ""
    """With a PermissionRequest `deny`: why, for the model."""
    interrupt: bool = False
    """With a PermissionRequest `deny`: stop the agent too."""
    updated_permissions: tuple[JSON, ...] = ()
    """With a PermissionRequest `allow`: rules to add, a mode to switch to (`updatedPermissions`)."""
    rewrites_input: bool = False
    """A PermissionRequest `allow` came with an `updatedInput` (which agentcli does not apply)."""


def decide(event: str, runs: Sequence[HookRun]) -> HookOutcome:
    blocked, reasons, contexts, warnings = False, [], [], []
    permission: Permission | None = None
    permission_reasons: list[str] = []
    updated: JSON | None = None
    stop: str | None = None
    request = _Request()
    for run in runs:
        name = f"{event} hook `{_short(run.hook.command)}`"
        if run.exit_code == 2:
            if event in SHOWN_ON_EXIT_2 and run.stderr.strip():
                warnings.append(f"{name}: {_one_line(run.stderr)}")
            elif event not in SHOWN_ON_EXIT_2 | IGNORED_ON_EXIT_2:
                blocked = True
                reasons.append(run.stderr.strip() or f"Blocked by the {name}.")
            continue
        if run.exit_code != 0:
            warnings.append(describe_failure(event, run))
            continue
        output = json_object(run.stdout)
        if output is None:
            if event in PLAIN_CONTEXT_EVENTS and run.stdout.strip():
                contexts.append(run.stdout.strip())
            continue
        if output.get("continue") is False:
            stop = text_of(output.get("stopReason")) or stop or f"Stopped by the {name}."
        if isinstance(message := output.get("systemMessage"), str) and message.strip():
            warnings.append(f"{name}: {_one_line(message)}")
        decision = output.get("decision")
        reason = text_of(output.get("reason"))
        specific = output.get("hookSpecificOutput")
        specific = specific if isinstance(specific, dict) else {}
        asked = specific.get("permissionDecision")
        if event == "PreToolUse" and asked is None and decision in ("approve", "block"):
            asked = "allow" if decision == "approve" else "deny"
        elif decision == "block":
            blocked = True
            reasons.append(reason or f"Blocked by the {name}.")
        if event == "PreToolUse" and asked in _STRENGTH:
            if permission is None or _STRENGTH[asked] > _STRENGTH[permission]:
                permission = asked
            if why := text_of(specific.get("permissionDecisionReason")) or reason:
                permission_reasons.append(why)
        if event == "PreToolUse" and isinstance(new_input := specific.get("updatedInput"), dict):
            updated = new_input if updated is None else updated
        if event == "PermissionRequest":
            request.read(specific.get("decision"))
        if context := text_of(specific.get("additionalContext")):
            contexts.append(context)
    return HookOutcome(
        blocked=blocked,
        reason="\n".join(reasons),
        permission=permission,
        permission_reason="\n".join(permission_reasons),
        updated_input=updated,
        context=tuple(contexts),
        stop=stop,
        warnings=tuple(warnings),
        behavior=request.behavior,
        message="\n".join(request.messages),
        interrupt=request.interrupt,
        updated_permissions=tuple(request.updates),
        rewrites_input=request.rewrites_input,
    )


@dataclass
class _Request:
    """What the PermissionRequest hooks decided, together: deny beats allow."""

    behavior: Behavior | None = None
    messages: list[str] = field(default_factory=list)
    interrupt: bool = False
    updates: list[JSON] = field(default_factory=list)
    rewrites_input: bool = False

    def read(self, decision: object) -> None:
        if not isinstance(decision, dict) or decision.get("behavior") not in ("allow", "deny"):
            return
        if decision["behavior"] == "deny":
            self.behavior = "deny"
            if message := text_of(decision.get("message")):
                self.messages.append(message)
            self.interrupt = self.interrupt or decision.get("interrupt") is True
            return
        self.behavior = self.behavior or "allow"
        updates = decision.get("updatedPermissions")
        if isinstance(updates, list):
            self.updates.extend(item for item in updates if isinstance(item, dict))
        self.rewrites_input = self.rewrites_input or isinstance(decision.get("updatedInput"), dict)


def describe_failure(event: str, run: HookRun) -> str:
    """One line for the user: how the hook failed, and that agentcli goes on."""
    name = f"{event} hook `{_short(run.hook.command)}`"
    if run.timed_out:
        return f"The {name} timed out after {run.hook.timeout:g} s and was stopped; going on without it."
    if run.failed_to_start:
        return f"The {name} could not be started ({run.failed_to_start}); going on without it."
    detail = _one_line(run.stderr)
    return f"The {name} failed with exit status {run.exit_code}{f': {detail}' if detail else ''}; going on."


def json_object(stdout: str) -> JSON | None:
    """Stdout that is one JSON object (else None: plain text)."""
    text = stdout.strip()
    if not text.startswith("{"):
        return None
    try:
        value = json.loads(text)
    except ValueError:  # not JSON, or a number of over 4,300 digits: plain output
        return None
    return value if isinstance(value, dict) else None


def text_of(value: object) -> str:
    return value.strip() if isinstance(value, str) else ""


def _one_line(text: str, limit: int = 200) -> str:
    line = " ".join(text.strip().splitlines()[:1])
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _short(command: str) -> str:
    return _one_line(command, 60)
