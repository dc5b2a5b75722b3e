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
`permissionDecisionReason` and `updatedInput` for PreToolUse, and `additionalContext`.
Several hooks combine: any block blocks, deny beats ask beats allow, contexts add up.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from agentcli.contracts import JSON
from agentcli.hooks.runner import HookRun

Permission = Literal["allow", "deny", "ask"]
PLAIN_CONTEXT_EVENTS = ("UserPromptSubmit", "SessionStart")
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


def decide(event: str, runs: Sequence[HookRun]) -> HookOutcome:
    blocked, reasons, contexts, warnings = False, [], [], []
    permission: Permission | None = None
    permission_reasons: list[str] = []
    updated: JSON | None = None
    stop: str | None = None
    for run in runs:
        name = f"{event} hook `{_short(run.hook.command)}`"
        if run.exit_code == 2:
            blocked = True
            reasons.append(run.stderr.strip() or f"Blocked by the {name}.")
            continue
        if run.exit_code != 0:
            warnings.append(_failure(name, run))
            continue
        output = _json_object(run.stdout)
        if output is None:
            if event in PLAIN_CONTEXT_EVENTS and run.stdout.strip():
                contexts.append(run.stdout.strip())
            continue
        if output.get("continue") is False:
            stop = _text(output.get("stopReason")) or stop or f"Stopped by the {name}."
        if isinstance(message := output.get("systemMessage"), str) and message.strip():
            warnings.append(f"{name}: {_one_line(message)}")
        decision = output.get("decision")
        reason = _text(output.get("reason"))
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
            if why := _text(specific.get("permissionDecisionReason")) or reason:
                permission_reasons.append(why)
        if event == "PreToolUse" and isinstance(new_input := specific.get("updatedInput"), dict):
            updated = new_input if updated is None else updated
        if context := _text(specific.get("additionalContext")):
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
    )


def _failure(name: str, run: HookRun) -> str:
    if run.timed_out:
        return f"The {name} timed out after {run.hook.timeout:g} s and was stopped; going on without it."
    if run.failed_to_start:
        return f"The {name} could not be started ({run.failed_to_start}); going on without it."
    detail = _one_line(run.stderr)
    return f"The {name} failed with exit status {run.exit_code}{f': {detail}' if detail else ''}; going on."


def _json_object(stdout: str) -> JSON | None:
    text = stdout.strip()
    if not text.startswith("{"):
        return None
    try:
        value = json.loads(text)
    except ValueError:  # not JSON, or a number of over 4,300 digits: plain output
        return None
    return value if isinstance(value, dict) else None


def _text(value: object) -> str:
    return value.strip() if isinstance(value, str) else ""


def _one_line(text: str, limit: int = 200) -> str:
    line = " ".join(text.strip().splitlines()[:1])
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _short(command: str) -> str:
    return _one_line(command, 60)
