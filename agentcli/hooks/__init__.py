"""Hooks: the user's commands run at points of the agent's life, Claude Code-compatible.

`config` reads them from the settings files, `runner` runs an event's matching commands at
once, `decisions` reads what they said, `trust` decides whether the checked-in file's hooks
run. `Hooks` is what the rest of agentcli calls: `hooks.run(event, fields, subject)` returns
the `HookOutcome`, after telling the user about hooks that failed. What an outcome does is
the caller's business, per event:

- PreToolUse (executor, gate): exit 2 or `deny` → the call is not run, the reason is its
  error result; `ask` → the user is asked even where a rule allows; `allow` → not asked,
  unless a deny or ask rule or a protected path says otherwise; `updatedInput` → the call
  runs with it, validated again.
- PostToolUse / PostToolUseFailure (executor): the reason and context go to the model with
  the result.
- UserPromptSubmit (session): exit 2 → nothing is sent, the reason is shown; stdout and
  context → a `<system-reminder>` in that message.
- Stop / SubagentStop (loop): exit 2 or `block` → the model goes on with the reason, at most
  `loop.MAX_STOP_HOOK_CONTINUATIONS` times in a row.
- SessionStart (session): stdout and context → a reminder in the next user message.
- PreCompact (session): stdout and context → instructions for the summary, after the user's
  `/compact` ones (Claude Code's custom instructions); a block changes nothing.
- SessionEnd, Notification: run for their effects; a block changes nothing.
- `continue: false` anywhere ends the agent's turn with the `stopReason`.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from agentcli.contracts import JSON
from agentcli.hooks.config import EVENTS, HookCommand, HookConfig, load_hooks, matcher_matches
from agentcli.hooks.decisions import HookOutcome
from agentcli.hooks.runner import run_hooks

__all__ = ["EVENTS", "NO_HOOKS", "HookCommand", "HookConfig", "HookOutcome", "Hooks", "load_hooks", "matcher_matches"]

NOTHING = HookOutcome()


class Hooks:
    """The hooks of one session, shared by its agent and its sub-agents."""

    def __init__(
        self,
        config: HookConfig | None = None,
        project: Path | None = None,
        *,
        about: Callable[[], JSON] = dict,
        passthrough: frozenset[str] = frozenset(),
        on_notice: Callable[[str], None] = lambda text: None,
    ) -> None:
        """`about` gives the fields every event's input carries (session_id, transcript_path,
        cwd, permission_mode) as they are now; `on_notice` tells the user about failed hooks."""
        self.config = config or HookConfig()
        self.project = project or Path.cwd()
        self._about = about
        self._passthrough = passthrough
        self._on_notice = on_notice

    def run(self, event: str, fields: JSON, subject: str | None = None) -> HookOutcome:
        """Run `event`'s hooks matching `subject` with the common fields and `fields` on stdin."""
        from agentcli.hooks.decisions import decide

        hooks = self.config.matching(event, subject)
        if not hooks:
            return NOTHING
        payload = {**self._about(), "hook_event_name": event, **fields}
        outcome = decide(event, run_hooks(hooks, payload, self.project, self._passthrough))
        for warning in outcome.warnings:
            self._on_notice(warning)
        return outcome


NO_HOOKS = Hooks()
"""No hooks configured: every event goes on at once."""
